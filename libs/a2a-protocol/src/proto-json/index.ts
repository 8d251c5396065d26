/**
 * ProtoJSON for A2A requests (spec digest §3, §4): the descriptor tables, the decoder that walks untrusted
 * input against them, scalar normalisation, the request nesting check, ListTasks page tokens and response
 * shaping.
 */
export * from './a2a-descriptors';
export * from './decoder';
export * from './descriptor';
export * from './nesting';
export * from './page-token';
export * from './response';
export * from './scalars';
