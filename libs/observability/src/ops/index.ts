export * from './closed-last';
export * from './dependency-monitor';
export * from './http-drain';
export * from './lifecycle';
export * from './metrics';
export * from './ops-server';
export * from './shutdown';
