export { createKafka, stopIdleRequestQueueLoop } from './kafka-client';
export { kafkaConnection, type KafkaConnection } from './kafka-connection';
