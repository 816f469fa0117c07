// Short secrets sealed at rest, such as merchants' webhook signing secrets.
export * from './secret-seal';
