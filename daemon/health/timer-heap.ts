// A binary min-heap of entries ordered by `due`, with each entry remembering its own slot so it can
// be removed or re-keyed in O(log n). The health scheduler keeps every target in one heap and arms a
// single timer for the earliest entry: 10,000 targets cost one timer, not 10,000 intervals.

export interface HeapEntry {
  due: number;
  /** Slot in the heap; -1 when not in it. Owned by the heap. */
  heapIndex: number;
}

export class TimerHeap<T extends HeapEntry> {
  private readonly items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  has(e: T): boolean {
    return e.heapIndex >= 0 && this.items[e.heapIndex] === e;
  }

  push(e: T): void {
    if (this.has(e)) throw new Error('entry already in the heap');
    e.heapIndex = this.items.length;
    this.items.push(e);
    this.up(e.heapIndex);
  }

  pop(): T | undefined {
    const top = this.items[0];
    if (top !== undefined) this.removeAt(0);
    return top;
  }

  remove(e: T): boolean {
    if (!this.has(e)) return false;
    this.removeAt(e.heapIndex);
    return true;
  }

  /** Changes an entry's due time (pushing it if absent). */
  update(e: T, due: number): void {
    if (!this.has(e)) {
      e.due = due;
      this.push(e);
      return;
    }
    const old = e.due;
    e.due = due;
    if (due < old) this.up(e.heapIndex);
    else this.down(e.heapIndex);
  }

  private removeAt(i: number): void {
    const items = this.items;
    const gone = items[i];
    const last = items.pop();
    if (gone !== undefined) gone.heapIndex = -1;
    if (last === undefined || i === items.length) return;
    items[i] = last;
    last.heapIndex = i;
    this.up(i);
    this.down(last.heapIndex);
  }

  private up(i: number): void {
    const items = this.items;
    const e = items[i];
    if (e === undefined) return;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = items[p];
      if (parent === undefined || parent.due <= e.due) break;
      items[i] = parent;
      parent.heapIndex = i;
      i = p;
    }
    items[i] = e;
    e.heapIndex = i;
  }

  private down(i: number): void {
    const items = this.items;
    const n = items.length;
    const e = items[i];
    if (e === undefined) return;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const left = items[l];
      const right = items[r];
      if (left === undefined) break;
      const child = right !== undefined && right.due < left.due ? r : l;
      const c = items[child];
      if (c === undefined || c.due >= e.due) break;
      items[i] = c;
      c.heapIndex = i;
      i = child;
    }
    items[i] = e;
    e.heapIndex = i;
  }
}
