/** The command-line options of the repository's scripts (fuzz, chaos): one reader, one error. */

/** `--name N`: a non-negative integer, `fallback` when absent; exits 2 naming the option when malformed. */
export function intOption(name: string, fallback: number, argv: readonly string[] = process.argv): number {
  const i = argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = Number(argv[i + 1]);
  if (!Number.isSafeInteger(v) || v < 0) {
    process.stderr.write(`--${name} takes a non-negative integer, got ${argv[i + 1]}\n`);
    process.exit(2);
  }
  return v;
}
