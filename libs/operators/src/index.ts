export * from './operator-access';
export * from './audit-trail';
