// Reading and writing the panel's config editor (CodeMirror 6 in a shadow root: a contenteditable, not a
// textarea) the way a user does. Typed by hand: the test files have no DOM library.
import type { Page } from 'playwright-core';

/** The editor's text as the user sees it, one line per rendered line (the config is short: all rendered). */
export async function editorText(page: Page): Promise<string> {
  const lines = await page.getByTestId('config-editor').locator('.cm-content .cm-line').allInnerTexts();
  return lines.join('\n').replace(/\u200b/g, '').trimEnd();
}

/**
 * Replaces the whole text as a paste over everything (Ctrl-A, then a paste event CodeMirror handles
 * itself). Not keyboard.insertText: Chromium's own contenteditable insertion adds style attributes,
 * which the panel's CSP then reports.
 */
export async function setEditorText(page: Page, text: string): Promise<void> {
  const content = page.getByLabel('Config (YAML)');
  await content.click();
  await page.keyboard.press('Control+A');
  await content.evaluate((el, t) => {
    const g = globalThis as unknown as { DataTransfer: new () => { setData: (k: string, v: string) => void }; ClipboardEvent: new (type: string, init: object) => unknown };
    const data = new g.DataTransfer();
    data.setData('text/plain', t);
    (el as unknown as { dispatchEvent: (e: unknown) => boolean }).dispatchEvent(new g.ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  }, text);
}
