/** Types of tools/build-app.mjs (plain JavaScript: the image's build stage runs it with node alone). */
export declare function appNames(root?: string): string[];
export declare function buildApp(
  app: string,
  options?: { root?: string; outdir?: string; minify?: boolean },
): Promise<string>;
