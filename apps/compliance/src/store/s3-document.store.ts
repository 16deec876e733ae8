import {
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import type { DocumentStore } from '../domain/document.js';

/** How to reach an S3-compatible bucket. */
export interface S3DocumentStoreConfig {
  bucket: string;
  /** Key prefix of every object (e.g. `documents/`). */
  prefix: string;
  region: string;
  /** Custom endpoint of an S3-compatible server (MinIO, Ceph, ...); absent: AWS. */
  endpoint?: string;
  /** Path-style addressing (`<endpoint>/<bucket>/<key>`), which most S3-compatible servers need. */
  forcePathStyle: boolean;
  /** Static credentials; absent: the SDK's default chain (environment, instance role, ...). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

/**
 * A DocumentStore over an S3-compatible bucket: each encrypted chunk is one object
 * `<prefix><blobId>/<index>` (the objects hold only ciphertext; keys and hashes stay in Postgres).
 */
export class S3DocumentStore implements DocumentStore {
  readonly kind = 's3';
  private readonly client: S3Client;

  constructor(private readonly config: S3DocumentStoreConfig) {
    const opts: S3ClientConfig = { region: config.region, forcePathStyle: config.forcePathStyle };
    if (config.endpoint) opts.endpoint = config.endpoint;
    if (config.credentials) opts.credentials = config.credentials;
    this.client = new S3Client(opts);
  }

  private key(blobId: string, index: number): string {
    return `${this.config.prefix}${blobId}/${index}`;
  }

  async putChunk(blobId: string, index: number, data: Buffer): Promise<void> {
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.config.bucket,
        Key: this.key(blobId, index),
        Body: data,
        ContentType: 'application/octet-stream',
      }),
    );
  }

  async getChunk(blobId: string, index: number): Promise<Buffer | undefined> {
    try {
      const res = await this.client.send(
        new GetObjectCommand({ Bucket: this.config.bucket, Key: this.key(blobId, index) }),
      );
      if (!res.Body) return undefined;
      return Buffer.from(await res.Body.transformToByteArray());
    } catch (err) {
      if (err instanceof NoSuchKey || (err as { name?: string }).name === 'NoSuchKey') return undefined;
      throw err;
    }
  }

  async deleteBlob(blobId: string, chunkCount: number): Promise<void> {
    for (let start = 0; start < chunkCount; start += 1000)
      await this.deleteKeys(
        Array.from({ length: Math.min(1000, chunkCount - start) }, (_, i) => this.key(blobId, start + i)),
      );
  }

  /** Lists the blob's objects (`<prefix><blobId>/`) and deletes them, a listing page at a time. */
  async deleteAllChunks(blobId: string): Promise<number> {
    let deleted = 0;
    for (;;) {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.config.bucket, Prefix: `${this.config.prefix}${blobId}/` }),
      );
      const keys = (page.Contents ?? []).flatMap((o) => (o.Key ? [o.Key] : []));
      if (keys.length) await this.deleteKeys(keys);
      deleted += keys.length;
      // The keys listed are gone: the next listing starts again from the first one left.
      if (!page.IsTruncated || !keys.length) return deleted;
    }
  }

  /** Deletes up to 1000 objects in one request; a key the server could not delete is an error. */
  private async deleteKeys(keys: string[]): Promise<void> {
    const res = await this.client.send(
      new DeleteObjectsCommand({
        Bucket: this.config.bucket,
        Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true },
      }),
    );
    const failed = res.Errors ?? [];
    if (failed.length)
      throw new Error(
        `the S3 store could not delete ${failed.length} objects (first: ${failed[0]!.Key}: ${failed[0]!.Code} ${failed[0]!.Message})`,
      );
  }

  close(): void {
    this.client.destroy();
  }
}
