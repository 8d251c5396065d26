export * from './call-notes';
export * from './fatal-errors';
export * from './log-context';
export * from './logging';
export * from './observability';
export * from './redaction';
