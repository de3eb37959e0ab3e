// The config module's public face: load (every error at once), the normalised types, the diff.
export { loadConfig, loadConfigText, loadConfigOrThrow, type LoadResult } from './load.js';
export { formatError, ConfigInvalid, type ConfigError } from './errors.js';
export { diffConfig, describeDiff, isEmptyDiff, type ConfigDiff, type SetDiff, type Changed, type VirtualServerChange } from './diff.js';
export type * from './types.js';
// For tools that build a config (the keepalived importer): the raw file type and its checks.
export type { ConfigFile } from './schema.js';
export { validateShape } from './validate.js';
export { checkSemantics } from './semantic.js';
