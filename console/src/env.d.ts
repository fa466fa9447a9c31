// esbuild bundles the stylesheet the entry imports into the hashed app-*.css.
declare module '*.css';
