export { createKafka, stopIdleRequestQueueLoop } from './kafka-client';
