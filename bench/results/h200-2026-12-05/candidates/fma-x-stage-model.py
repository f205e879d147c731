# A thread-level model of fma-x-stage.patch's x staging (gemv_t_fma and gemv_n_fma), run on
# the host. For random element sizes, vector counts, split bounds and (op N) warps, it replays
# each lane's sequence of x runs as the kernels on main read them from global memory, and as the
# patched kernels read them: the block's cp.async copies (stage_vectors: piece i of a stage from
# thread i % kThreads) fill two buffers, stage s in buffer s % 2, and the lanes read their runs
# at fixed offsets there (read_shared_run). The copies of stage s + 1 are issued before the
# reads of stage s, as in the kernels, and modelled as landing at once, so that a copy into
# the buffer being read would change what it reads. Checked: every run read from shared memory
# holds the elements the global read gives, in the same order of steps (so the same sums, the
# same bits); every piece of a stage is copied exactly once; no copy reads x outside the
# split's elements.
#   python3 fma-x-stage-model.py   ->  "runs checked: N", or an AssertionError
import random

random.seed(5)
kThreads, kUnroll = 128, 2
checked = 0


def stage_copies(kVectors, kLength, piece_elems, vectors):
    """stage_vectors: (thread, vector c, element offset, source vector) of every piece."""
    per_vector = kLength // piece_elems
    pieces = kVectors * per_vector
    out = []
    for start in range(0, pieces, kThreads):
        for t in range(kThreads):
            i = start + t
            if i < pieces:
                c, element = i // per_vector, i % per_vector * piece_elems
                out.append((t, c, element, min(c, vectors - 1)))
    assert sorted((c, e) for _, c, e, _ in out) == sorted(
        (c, e * piece_elems) for c in range(kVectors) for e in range(per_vector))
    return out


def random_split(kVectors, unit, most_extent, most_units):
    """A pass's vector count, and a split [first, end) of `length` (whole units) of an extent."""
    vectors = random.randint(max(1, kVectors // 2), kVectors)
    extent = random.randint(1, most_extent)
    length = unit * random.randint(1, most_units)
    first = length * random.randint(0, (extent - 1) // length)
    return vectors, first, min(extent, first + length)


def fill(buffer, copies, first, piece_elems, lo, hi):
    for _, c, element, source in copies:
        for e in range(piece_elems):
            x = first + element + e
            assert lo <= x < hi, "a copy reads x outside the split"
            buffer[(c, element + e)] = (source, x)


# --- op T (gemv_t_fma): lane quad_lane reads kElems elements at kk = k + u*kChunk + quad_lane*kElems
for esize in (2, 4, 8):
    kElems = 16 // esize
    kChunk = 4 * kElems
    kWarpStep = kChunk * kUnroll
    kStageSteps = 4
    kStage = kWarpStep * kStageSteps
    for kVectors in (2, 4, 8, 16):
        for trial in range(60):
            vectors, k0, k1 = random_split(kVectors, kWarpStep, 40 * kWarpStep, 30)

            def global_steps():
                reads, k = [], k0
                while k + kWarpStep <= k1:
                    reads.append(k); k += kWarpStep
                while k < k1:
                    reads.append(k); k += kWarpStep
                return reads

            copies = stage_copies(kVectors, kStage, kElems, vectors)
            buffers = [dict(), dict()]
            stages = (k1 - k0) // kStage
            staged_steps = []
            if stages > 0:
                fill(buffers[0], copies, k0, kElems, k0, k1)
            for s in range(stages):
                if s + 1 < stages:
                    fill(buffers[(s + 1) % 2], copies, k0 + (s + 1) * kStage, kElems, k0, k1)
                for step in range(kStageSteps):
                    k = k0 + s * kStage + step * kWarpStep
                    staged_steps.append(k)
                    for quad_lane in range(4):
                        for u in range(kUnroll):
                            for c in range(kVectors):
                                offset = step * kWarpStep + u * kChunk + quad_lane * kElems
                                run = [buffers[s % 2][(c, offset + e)] for e in range(kElems)]
                                kk = k + u * kChunk + quad_lane * kElems
                                want = [(min(c, vectors - 1), kk + e) for e in range(kElems)]
                                assert run == want, (esize, kVectors, k0, k1, s, step, c)
                                checked += 1
            k = k0 + stages * kStage
            rest = []
            while k + kWarpStep <= k1:
                rest.append(k); k += kWarpStep
            while k < k1:
                rest.append(k); k += kWarpStep
            assert staged_steps + rest == global_steps()

# --- op N (gemv_n_fma): warp w takes column steps j0 + w*kWarpStep + i*kWarps*kWarpStep; a
# step reads, per vector, kStepColumns x elements at column j + u*kStepColumns (a broadcast).
kWarps, kStepColumns = 4, 4
kWarpStep = kStepColumns * kUnroll
for esize in (2, 4, 8):
    piece_elems = 16 // esize
    block_step = kWarps * kWarpStep
    stage_block_steps = max(1, 256 // (block_step * esize))
    kStageColumns = block_step * stage_block_steps
    for kVectors in (2, 4, 8, 16):
        for trial in range(60):
            vectors, j0, j1 = random_split(kVectors, block_step, 30 * kStageColumns, 20)
            copies = stage_copies(kVectors, kStageColumns, piece_elems, vectors)
            stages = (j1 - j0) // kStageColumns
            for warp in range(kWarps):
                main_steps = list(range(j0 + warp * kWarpStep, j1, block_step))
                buffers = [dict(), dict()]
                j, staged = j0 + warp * kWarpStep, []
                if stages > 0:
                    fill(buffers[0], copies, j0, piece_elems, j0, j1)
                for s in range(stages):
                    if s + 1 < stages:
                        fill(buffers[(s + 1) % 2], copies, j0 + (s + 1) * kStageColumns,
                             piece_elems, j0, j1)
                    for step in range(stage_block_steps):
                        warp_x = warp * kWarpStep + step * block_step
                        assert j + kWarpStep <= j1, "a staged step is whole"
                        for u in range(kUnroll):
                            for c in range(kVectors):
                                offset = warp_x + u * kStepColumns
                                run = [buffers[s % 2][(c, offset + q)] for q in range(kStepColumns)]
                                want = [(min(c, vectors - 1), j + u * kStepColumns + q)
                                        for q in range(kStepColumns)]
                                assert run == want, (esize, kVectors, j0, j1, warp, s, step, c)
                                checked += 1
                        staged.append(j)
                        j += block_step
                rest = list(range(j, j1, block_step))
                assert staged + rest == main_steps
print("runs checked:", checked)
