#!/usr/bin/env python3
"""A host model of t_fma's copy schedule (fma-ring.patch): one block's threads walking the same
steps, each thread with its own queue of cp.async groups. Group g holds A of step g (the
thread's own ring stage g % R) and, where g begins a stage, x's stage g // S (the whole
block's, buffer (g // S) % 2). Iteration s: wait until at most R - 2 groups are pending,
barrier where s begins a stage, issue group s + R - 1, read ring stage s % R and x buffer
(s // S) % 2. Threads run at any speed between barriers; a copy lands at any time between its
issue and the wait that covers it.

Checks, for every ring depth R, stage length S and step count:
- every read finds its data landed: A (the thread's own group) by the thread's wait; x (every
  thread's group) by a wait of each thread followed by a barrier that the reader has passed;
- no copy can land in a slot or buffer while a read of its previous content may still come:
  a ring slot is refilled only after the thread's own read of it (program order); an x buffer
  only after a barrier that every reader of its previous stage passed after reading it.
Mutations (S = R - 2; the issue before the barrier; waiting for R - 1 pending groups) must fail.
"""
import itertools
import sys


def check(R, S, steps, mutation=None):
    wait_pending = R - 2 if mutation != "wait" else R - 1
    barrier_first = mutation != "issue-first"
    # Per iteration s (the same program in every thread): the order of its events.
    # issued[g] = (iteration, position) of the issue of group g; position 0 = before the
    # barrier of that iteration, 1 = after it.
    issued = {}
    for g in range(R - 1):
        issued[g] = (-1, 1)  # the prologue
    for s in range(steps):
        issued[s + R - 1] = (s, 1 if barrier_first else 0)
    # The wait of iteration s covers groups 0 .. (committed - 1 - wait_pending), committed =
    # R - 1 + s before the issue of iteration s.
    def covered_by_wait(g):
        # the first iteration whose wait covers g
        for s in range(steps):
            if g <= R - 1 + s - 1 - wait_pending:
                return s
        return None
    barriers = [s for s in range(steps) if s % S == 0]
    def barrier_at_or_before(s):
        b = [x for x in barriers if x <= s]
        return b[-1] if b else None
    errors = []
    for s in range(steps):
        # A of step s: group s, this thread's ring stage s % R.
        w = covered_by_wait(s)
        if w is None or w > s:
            errors.append(f"step {s}: A not waited for")
        # The previous content of ring stage s % R was step s - R, read at iteration s - R; the
        # copy of step s was issued at iteration s - R + 1 or later (program order after that
        # read) -- check it.
        it, _ = issued[s]
        if s - R >= 0 and it <= s - R:
            errors.append(f"step {s}: ring stage refilled at iteration {it} "
                          f"before its read at {s - R}")
        # x of step s: stage t = s // S, in group t * S, issued by every thread.
        t = s // S
        g = t * S
        w = covered_by_wait(g)
        b = barrier_at_or_before(s)
        # Every thread's wait at iteration w precedes its barrier at iteration >= w; the reader
        # passed barrier b. Need w <= b (the wait of iteration b comes before its barrier).
        if w is None or b is None or w > b:
            errors.append(f"step {s}: x stage {t} not landed for every thread before a barrier")
        # The previous content of x buffer t % 2 is stage t - 2, read at iterations
        # (t - 2) * S .. (t - 1) * S - 1 by every thread. The copy of stage t is issued at
        # issued[g]; it is safe if the issuing thread passed a barrier that follows every
        # such read: a barrier at iteration >= (t - 1) * S, at or before the issue (after the
        # barrier within the same iteration).
        if t >= 2:
            it, pos = issued[g]
            last_read = (t - 1) * S - 1
            passed = [x for x in barriers if x < it or (x == it and pos == 1)]
            if not passed or passed[-1] <= last_read:
                errors.append(f"step {s}: x buffer of stage {t} refilled at iteration {it} "
                              f"while stage {t - 2} may still be read (to iteration {last_read})")
    return errors


def main():
    runs = 0
    for R in range(2, 9):
        for S in range(R - 1, R + 4):
            for steps in range(0, 64):
                if steps % S:
                    continue  # whole stages only
                runs += 1
                errors = check(R, S, steps)
                if errors:
                    print(f"R={R} S={S} steps={steps}: {errors[0]}")
                    return 1
    print(f"{runs} schedules: every read finds its copies landed, "
          "no copy overwrites data still to be read")
    # Mutations must be caught.
    for name, args in (("S = R - 2", dict(mutation=None, S_delta=-1)),
                       ("issue before the barrier", dict(mutation="issue-first", S_delta=0)),
                       ("wait for R - 1 pending", dict(mutation="wait", S_delta=0))):
        caught = False
        for R in range(3, 9):
            S = R - 1 + args["S_delta"]
            for steps in range(S, 64, S):
                if check(R, S, steps, args["mutation"]):
                    caught = True
        print(f"mutation '{name}': {'caught' if caught else 'NOT caught'}")
        if not caught:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
