import { pgTextArray, type EntityManager } from '@sluice/store';

/** A blob the orphan sweeper took, and whether a document references it after all. */
export interface ClaimedBlob {
  blobId: string;
  /** A document row names it (a row entered by migration 0012 for an upload of the release before that committed later). */
  referenced: boolean;
}

/**
 * `unreferenced_blobs`: the blobs whose chunks may be in the DocumentStore while no document row
 * references them (exact SQL). An upload's blob is entered in its own committed statement before
 * its first chunk is written and leaves in the transaction that commits its document (or once its
 * chunks are deleted); a replaced or deleted document's old file is entered in the transaction
 * that drops its reference and leaves once its chunks are deleted. So chunks nobody references
 * always have a row here, whatever process died where, and the orphan sweeper finds them by it.
 * Times are the database's (`since`), the same clock for every replica.
 */
export class UnreferencedBlobRepository {
  /** Enters a blob (in `em`'s transaction, or at once outside one); a blob entered already keeps its time. */
  async track(em: EntityManager, blobId: string): Promise<void> {
    await em.execute(`INSERT INTO unreferenced_blobs (blob_id) VALUES (?) ON CONFLICT (blob_id) DO NOTHING`, [
      blobId,
    ]);
  }

  /** Removes blobs (a document references it now, or its chunks are gone); answers how many rows there were. */
  async untrack(em: EntityManager, ...blobIds: string[]): Promise<number> {
    if (!blobIds.length) return 0;
    const rows = await em.execute<{ blob_id: string }[]>(
      `DELETE FROM unreferenced_blobs WHERE blob_id = ANY(?::text[]) RETURNING blob_id`,
      [pgTextArray(blobIds)],
    );
    return rows.length;
  }

  /**
   * Takes up to `limit` blobs entered more than `ageSeconds` ago, oldest first, locked for `em`'s
   * transaction; rows another transaction holds (another replica's sweeper, an upload committing
   * its document) are skipped, not waited for.
   */
  async claimAbandoned(em: EntityManager, ageSeconds: number, limit: number): Promise<ClaimedBlob[]> {
    const rows = await em.execute<{ blob_id: string; referenced: boolean }[]>(
      `SELECT u.blob_id, EXISTS (SELECT 1 FROM documents d WHERE d.blob_id = u.blob_id) AS referenced
         FROM unreferenced_blobs u
        WHERE u.since < now() - ?::integer * interval '1 second'
        ORDER BY u.since LIMIT ? FOR UPDATE OF u SKIP LOCKED`,
      [ageSeconds, limit],
    );
    return rows.map((r) => ({ blobId: r.blob_id, referenced: r.referenced }));
  }

  /** Moves a blob to the back of the queue: taken again `ageSeconds` from now (its chunks could not be deleted). */
  async postpone(em: EntityManager, blobId: string): Promise<void> {
    await em.execute(`UPDATE unreferenced_blobs SET since = now() WHERE blob_id = ?`, [blobId]);
  }
}
