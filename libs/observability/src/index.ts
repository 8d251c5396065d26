// Everything: the Nest-free half (`./process`, also `@lib/observability/process`) and what only a Nest application uses.
export * from './call-notes';
export * from './nest-logging';
export * from './observability';
export * from './ops';
export * from './process';
