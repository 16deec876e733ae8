import { describe, expect, it } from 'vitest';
import { readdirSync, existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Module-level state of a source file: `let`/`var` bindings and collections built at the top level. */
function moduleState(source: string, file = 'x.ts'): string[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.ES2022, true);
  const found: string[] = [];
  for (const st of sf.statements) {
    if (!ts.isVariableStatement(st)) continue;
    const list = st.declarationList;
    const mutable = (list.flags & ts.NodeFlags.Let) !== 0 || (list.flags & (ts.NodeFlags.Const | ts.NodeFlags.Let)) === 0;
    for (const d of list.declarations) {
      const name = d.name.getText(sf);
      if (mutable) found.push(`${name} (a module-level ${list.flags & ts.NodeFlags.Let ? 'let' : 'var'})`);
      else if (
        d.initializer &&
        ts.isNewExpression(d.initializer) &&
        /^(Weak)?(Map|Set)$/.test(d.initializer.expression.getText(sf))
      )
        found.push(`${name} (a module-level ${d.initializer.expression.getText(sf)})`);
    }
  }
  return found;
}

const wiringFiles = readdirSync(join(root, 'apps'))
  .flatMap((app) => ['main.ts', 'service.ts', 'compose.ts', 'index.ts', 'app.ts'].map((f) => join('apps', app, 'src', f)))
  .filter((f) => existsSync(join(root, f)));

describe('service wiring keeps no module-level state', () => {
  it('finds module-level state when there is some (the check can fail)', () => {
    expect(moduleState('const instances = new WeakMap<object, number>();\nlet started = false;\nconst A = 1;\n')).toEqual([
      'instances (a module-level WeakMap)',
      'started (a module-level let)',
    ]);
  });

  it.each(wiringFiles)('%s', (file) => {
    expect(moduleState(readFileSync(join(root, file), 'utf8'), file)).toEqual([]);
  });
});
