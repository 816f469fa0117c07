export * from './retention-pruner';
