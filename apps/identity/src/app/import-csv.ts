import { Readable, pipeline } from 'node:stream';
import { CsvError, parse } from 'csv-parse';
import { invalidInput } from '@sluice/core';
import {
  MAX_IMPORT_RECORD_CHARS,
  checkImportHeader,
  importRow,
  type ImportColumn,
  type ImportRow,
} from '../domain/bulk-import.js';

const fileProblem = (message: string) => invalidInput([{ field: 'file', message }]);

/** The bytes as UTF-8 text, chunk by chunk; a byte sequence that is not UTF-8 fails the file. */
async function* utf8(bytes: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  try {
    for await (const chunk of bytes) yield decoder.decode(chunk, { stream: true });
    yield decoder.decode();
  } catch (err) {
    if (err instanceof TypeError) throw fileProblem('is not UTF-8 text');
    throw err;
  }
}

/**
 * The data rows of a CSV file as it streams in (RFC 4180: quoted values may hold commas, quotes
 * and line breaks; a UTF-8 byte order mark is skipped; empty lines are skipped; a row may have
 * fewer values than the header, the missing ones empty). The header row is checked first
 * (`checkImportHeader`). Only the record being parsed is held, never the file. A file that is not
 * CSV (an unclosed quote, a record over MAX_IMPORT_RECORD_CHARS, a NUL character, bytes that
 * are not UTF-8) fails as a whole with INVALID_INPUT on `file` naming the line.
 */
export async function* readImportCsv(bytes: AsyncIterable<Uint8Array>): AsyncGenerator<ImportRow> {
  const parser = parse({
    bom: true,
    relax_column_count: true,
    skip_empty_lines: true,
    max_record_size: MAX_IMPORT_RECORD_CHARS,
    info: true,
  });
  // pipeline: an error of the source (not UTF-8, the upload cut short) destroys the parser with it.
  pipeline(Readable.from(utf8(bytes)), parser, () => {});
  let columns: ImportColumn[] | undefined;
  let row = 0;
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      if (record.some((v) => v.includes('\u0000')))
        throw fileProblem(`line ${info.lines} has a NUL character (a CSV file is text)`);
      if (!columns) {
        columns = checkImportHeader(record.map((v) => v.trim()));
        continue;
      }
      yield importRow(columns, record, ++row, info.lines);
    }
  } catch (err) {
    if (err instanceof CsvError) throw fileProblem(`is not a readable CSV file: ${err.message}`);
    throw err;
  } finally {
    parser.destroy();
  }
  if (!columns) throw fileProblem('is empty (the first line must be the header)');
}
