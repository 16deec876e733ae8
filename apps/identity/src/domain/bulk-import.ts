import { invalidInput, type FieldError } from '@sluice/core';
import { CUSTOMER_TYPES, type CustomerType, type NewCustomerInput } from './customer.js';

/**
 * Bulk customer import from CSV (POST /customers/bulk/csv). The file's columns are the
 * reference's: each data row is one customer creation, validated by the same rules as
 * POST /customers (`validateNewCustomer`, applied by the service) plus the columns the CSV
 * format requires for the row's customer type. Errors name the CSV column at fault.
 */

/** Most data rows in one file (a bigger import is split into files). */
export const MAX_IMPORT_ROWS = 100_000;
/** Longest record of a file, in characters: a longer one is a broken file, not a customer. */
export const MAX_IMPORT_RECORD_CHARS = 16_384;

/** Every column a file may have (the reference's CSV format). */
export const IMPORT_COLUMNS = [
  'umaAddress',
  'platformCustomerId',
  'customerType',
  'fullName',
  'birthDate',
  'email',
  'addressLine1',
  'addressLine2',
  'city',
  'state',
  'postalCode',
  'country',
  'businessLegalName',
  'businessRegistrationNumber',
  'businessTaxId',
  'platformAccountId',
  'description',
] as const;
export type ImportColumn = (typeof IMPORT_COLUMNS)[number];

/** Columns every file has (whatever its customers' types). */
const HEADER_REQUIRED: readonly ImportColumn[] = ['platformCustomerId', 'customerType'];

/** Columns a row of each customer type must fill (the reference's CSV format). */
const ROW_REQUIRED: Record<CustomerType, readonly ImportColumn[]> = {
  INDIVIDUAL: ['platformCustomerId', 'fullName', 'birthDate', 'addressLine1', 'city', 'state', 'postalCode', 'country'],
  BUSINESS: ['platformCustomerId', 'businessLegalName', 'addressLine1', 'city', 'state', 'postalCode', 'country'],
};

/** Columns only one type may fill (the other type's row fails naming them). */
const TYPE_ONLY: Record<CustomerType, readonly ImportColumn[]> = {
  INDIVIDUAL: ['fullName', 'birthDate', 'email'],
  BUSINESS: ['businessLegalName', 'businessRegistrationNumber', 'businessTaxId'],
};

/** The CSV column of each field of a customer creation (for errors of the shared rules). */
const COLUMN_OF_FIELD: Record<string, ImportColumn> = {
  'address.line1': 'addressLine1',
  'address.line2': 'addressLine2',
  'address.city': 'city',
  'address.state': 'state',
  'address.postalCode': 'postalCode',
  'address.country': 'country',
  'businessInfo.legalName': 'businessLegalName',
  'businessInfo.registrationNumber': 'businessRegistrationNumber',
  'businessInfo.taxId': 'businessTaxId',
};

/** The CSV column an error of the customer rules is about (the field itself when it has no column). */
export function columnOf(field: string): string {
  return COLUMN_OF_FIELD[field] ?? field;
}

/**
 * Checks a file's header row: known columns, each once, the required ones present. Throws
 * INVALID_INPUT on `file` naming the column; returns the columns in file order.
 */
export function checkImportHeader(header: readonly string[]): ImportColumn[] {
  const problems: FieldError[] = [];
  const seen = new Set<string>();
  header.forEach((name, i) => {
    if (!(IMPORT_COLUMNS as readonly string[]).includes(name))
      problems.push({
        field: 'file',
        message: `column ${i + 1} of the header is "${name.slice(0, 64)}", not a column of the CSV format (${IMPORT_COLUMNS.join(', ')})`,
      });
    else if (seen.has(name)) problems.push({ field: 'file', message: `the header names column ${name} twice` });
    seen.add(name);
  });
  for (const c of HEADER_REQUIRED)
    if (!seen.has(c)) problems.push({ field: 'file', message: `the header has no ${c} column (required)` });
  if (problems.length) throw invalidInput(problems);
  return header as ImportColumn[];
}

/** One data row of a file: its position and its values by column (empty cells absent). */
export interface ImportRow {
  /** 1-based data row (the header is not counted). */
  row: number;
  /** The line of the file the row starts on. */
  line: number;
  values: Partial<Record<ImportColumn, string>>;
  /** More values than the header has columns. */
  extraValues?: number;
}

/** Builds a row from the parsed values (trimmed; empty cells are absent). */
export function importRow(
  columns: readonly ImportColumn[],
  cells: readonly string[],
  row: number,
  line: number,
): ImportRow {
  const values: ImportRow['values'] = {};
  columns.forEach((c, i) => {
    const v = cells[i]?.trim();
    if (v) values[c] = v;
  });
  const out: ImportRow = { row, line, values };
  if (cells.length > columns.length && cells.slice(columns.length).some((v) => v.trim()))
    out.extraValues = cells.length - columns.length;
  return out;
}

/** The row's correlation id in the job's errors: its platformCustomerId, or row_<n>. */
export function correlationIdOf(r: ImportRow): string {
  return r.values.platformCustomerId ?? `row_${r.row}`;
}

/**
 * The customer creation a row asks for, or the problems that keep it from being one (the CSV
 * format's own: type, required and type-only columns; the customer rules are checked after).
 * platformAccountId and description are accepted and not stored (the Customer has no such fields).
 */
export function rowToCustomerInput(r: ImportRow): { input: NewCustomerInput } | { problems: FieldError[] } {
  const v = r.values;
  const problems: FieldError[] = [];
  if (r.extraValues)
    problems.push({ field: 'file', message: `the row has ${r.extraValues} more values than the header has columns` });
  const type = v.customerType as CustomerType | undefined;
  if (!type || !CUSTOMER_TYPES.includes(type)) {
    problems.push({ field: 'customerType', message: 'must be INDIVIDUAL or BUSINESS' });
    return { problems };
  }
  for (const c of ROW_REQUIRED[type])
    if (v[c] === undefined) problems.push({ field: c, message: `is required for ${type} customers` });
  const other: CustomerType = type === 'INDIVIDUAL' ? 'BUSINESS' : 'INDIVIDUAL';
  for (const c of TYPE_ONLY[other])
    if (v[c] !== undefined) problems.push({ field: c, message: `is only for ${other} customers` });
  if (problems.length) return { problems };
  const input: NewCustomerInput = {
    customerType: type,
    platformCustomerId: v.platformCustomerId!,
    currencies: [],
    address: {
      line1: v.addressLine1!,
      ...(v.addressLine2 !== undefined ? { line2: v.addressLine2 } : {}),
      city: v.city!,
      state: v.state!,
      postalCode: v.postalCode!,
      country: v.country!,
    },
  };
  if (v.umaAddress !== undefined) input.umaAddress = v.umaAddress;
  if (type === 'INDIVIDUAL') {
    input.fullName = v.fullName!;
    input.birthDate = v.birthDate!;
    if (v.email !== undefined) input.email = v.email;
  } else {
    input.businessInfo = {
      legalName: v.businessLegalName!,
      ...(v.businessRegistrationNumber !== undefined ? { registrationNumber: v.businessRegistrationNumber } : {}),
      ...(v.businessTaxId !== undefined ? { taxId: v.businessTaxId } : {}),
    };
  }
  return { input };
}

export const BULK_IMPORT_STATUSES = ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED'] as const;
export type BulkImportStatus = (typeof BULK_IMPORT_STATUSES)[number];

/** Why one row created no customer (REST BulkCustomerImportErrorEntry). */
export interface ImportRowError {
  correlationId: string;
  code: string;
  message: string;
  row: number;
  line: number;
  errors: FieldError[];
  customerId?: string;
}

/** A bulk import job and its progress. */
export interface BulkImportJob {
  id: string;
  platformId: string;
  status: BulkImportStatus;
  total: number;
  processed: number;
  successful: number;
  failed: number;
  /** The first failed rows, in row order. */
  errors: ImportRowError[];
  createdAt: Date;
  completedAt?: Date;
}

/** The status once every row is processed: FAILED when no row has its customer, else COMPLETED. */
export function finalStatus(j: Pick<BulkImportJob, 'successful'>): BulkImportStatus {
  return j.successful === 0 ? 'FAILED' : 'COMPLETED';
}
