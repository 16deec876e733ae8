import { describe, expect, it } from 'vitest';
import { PollLoop } from './poll-loop.js';

describe('PollLoop', () => {
  it('a nudge during a tick that found nothing runs another tick instead of sleeping (no lost wake-up)', async () => {
    let ticks = 0;
    let loop!: PollLoop;
    const second = new Promise<void>((resolve) => {
      loop = new PollLoop(
        async () => {
          ticks++;
          if (ticks === 1) loop.nudge(); // e.g. a NOTIFY arriving while the first look found nothing
          if (ticks === 2) resolve();
          return false;
        },
        { idleMs: 3_600_000, onError: () => {} },
      );
    });
    loop.start();
    await second;
    await loop.stop();
    expect(ticks).toBe(2);
  });
});
