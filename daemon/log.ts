// Logging: pino JSON lines on stdout (pino-pretty when stdout is a terminal). Every line about an
// object carries its name under a fixed key — instance, syncGroup, virtualServer, realServer —
// so operators can grep and log shippers can index. Secrets never reach the log: redaction of
// passwords, tokens, cookies and authorization headers wherever they are logged.
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export type { Logger } from 'pino';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const REDACTED = '[redacted]';

/** Keys whose values are secrets, at the top of a log object and up to three levels down. */
const SECRET_KEYS = ['password', 'passwd', 'secret', 'token', 'apiToken', 'apiKey', 'authorization', 'cookie', 'privateKey'];
export const REDACT_PATHS: string[] = [
  ...SECRET_KEYS.flatMap((k) => [k, `*.${k}`, `*.*.${k}`, `*.*.*.${k}`]),
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  // A whole Config logged as `config`: VRRPv2 passwords sit deeper than the wildcards reach.
  'config.vrrp.instances[*].authentication.password',
];

export interface LogOptions {
  level?: LogLevel;
  /** Human-readable output; default: when stdout is a TTY and LVSD_LOG_FORMAT is not "json". */
  pretty?: boolean;
  /** Where lines go (tests); default stdout. */
  destination?: DestinationStream;
  /** Fields on every line (e.g. node: director-1). */
  base?: Record<string, unknown>;
}

export function isLogLevel(s: string | undefined): s is LogLevel {
  return s !== undefined && (LOG_LEVELS as readonly string[]).includes(s);
}

export function createLogger(opts: LogOptions = {}): Logger {
  const envLevel = process.env.LVSD_LOG_LEVEL;
  const level: LogLevel = opts.level ?? (isLogLevel(envLevel) ? envLevel : 'info');
  const options: LoggerOptions = {
    level,
    base: { pid: process.pid, ...opts.base },
    redact: { paths: REDACT_PATHS, censor: REDACTED },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
  if (opts.destination) return pino(options, opts.destination);
  const pretty = opts.pretty ?? (process.stdout.isTTY && process.env.LVSD_LOG_FORMAT !== 'json');
  if (pretty) {
    return pino({ ...options, transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } } });
  }
  return pino(options, pino.destination({ dest: 1, sync: true }));
}

/** A logger for one VRRP instance: every line carries `instance`. */
export function instanceLogger(log: Logger, name: string): Logger {
  return log.child({ instance: name });
}

export function syncGroupLogger(log: Logger, name: string): Logger {
  return log.child({ syncGroup: name });
}

/** A logger for one virtual server: every line carries `virtualServer` (its name). */
export function virtualServerLogger(log: Logger, name: string): Logger {
  return log.child({ virtualServer: name });
}

/** A logger for one real server of a virtual server: lines carry both names. */
export function realServerLogger(log: Logger, virtualServer: string, realServer: string): Logger {
  return log.child({ virtualServer, realServer });
}
