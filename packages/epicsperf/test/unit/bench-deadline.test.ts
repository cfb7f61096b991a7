// A client's deadline on one bench run: --deadline counts from the run's start; a profile's
// counts beyond the time the run asks for, so asking for more samples never gets every client
// stopped (`bench monitor --samples 300` at 10 Hz on the quick profile: 30 s + 30 s).
import { describe, expect, it } from 'vitest';
import { clientDeadline, PROFILES } from '../../src/bench/profiles.js';

describe('clientDeadline', () => {
  it("a profile's deadline is beyond the run's own time; --deadline is from the start; none is none", () => {
    const profile = clientDeadline({ clientDeadlineS: PROFILES.quick.clientDeadlineS, clientDeadlineBeyondWork: true });
    expect(profile(300 / 10)).toEqual({ clientDeadlineMs: 60_000 });
    expect(profile(0)).toEqual({ clientDeadlineMs: 30_000 });
    expect(clientDeadline({ clientDeadlineS: 6 })(30)).toEqual({ clientDeadlineMs: 6000 });
    expect(clientDeadline({})(30)).toEqual({});
  });
});
