# A lane-level model of shifted-columns.patch's loads (accumulate_shifted_columns and the tile
# test of gemv_n_rowtile), run on the host: for random element sizes, row-tile widths, leading
# dimensions and offsets of A, every lane of every tile that takes the path must get exactly its
# slice (elements [row_lane * kElems, +kElems) of the tile's column) from its lower block, the
# next lane's (or, for the last lane, its own upper block) and funnel16, and every block read
# must lie in rows [r0 - kElems, r0 + kRows + kElems) of the same column.
#   python3 shifted-columns-model.py   ->  "slices checked: N", or an AssertionError
import random, struct
def funnel16(lo, hi, offset, esize):
    w = list(struct.unpack('<4I', lo)) + list(struct.unpack('<4I', hi))
    q = offset // 4
    out = []
    for i in range(4):
        if esize >= 4: out.append(w[q + i])
        else:
            bits = (offset & 3) * 8
            v = ((w[q + i + 1] << 32) | w[q + i]) >> bits   # __funnelshift_r(lo, hi, bits)
            out.append(v & 0xffffffff)
    return struct.pack('<4I', *out)
random.seed(1)
checked = 0
for esize in (2, 4, 8):
    kElems = 16 // esize
    for kRowThreads in (32, 8):
        kRows = kRowThreads * kElems
        for trial in range(300):
            m = random.randint(kRows * 2 + kElems, kRows * 6)
            lda = m + random.randint(0, 9)
            base_elems = random.randint(0, 7)          # A at an element offset in its allocation
            n = 3
            size = (base_elems + lda * n) * esize
            mem = bytes(random.getrandbits(8) for _ in range(size + 64))
            A = base_elems * esize                     # byte address of A[0,0]; allocation at 0
            tiles = (m + kRows - 1) // kRows
            for t in range(tiles):
                r0 = t * kRows; rows_left = m - r0
                aligned = (lda * esize) % 16 == 0 and (A + r0 * esize) % 16 == 0 and rows_left >= kRows
                shifted = not aligned and r0 > 0 and rows_left >= kRows + kElems
                if not shifted: continue
                for j in range(n):
                    col = A + j * lda * esize
                    lo_rows, hi_rows = col + (r0 - kElems) * esize, col + (r0 + kRows + kElems) * esize
                    lowers, uppers, offs = [], [], []
                    for lane in range(kRowThreads):
                        addr = col + (r0 + lane * kElems) * esize
                        blk = addr & ~15; off = addr & 15
                        assert lo_rows <= blk and blk + 16 <= hi_rows, "lower outside"
                        lowers.append(mem[blk:blk + 16]); offs.append(off)
                        if lane == kRowThreads - 1 and off != 0:
                            assert blk + 32 <= hi_rows, "upper outside"
                            uppers.append(mem[blk + 16:blk + 32])
                        else: uppers.append(bytes(16))
                    for lane in range(kRowThreads):
                        nxt = lowers[(lane + 1) % kRowThreads]
                        last = lane == kRowThreads - 1
                        got = funnel16(lowers[lane], uppers[lane] if last else nxt, offs[lane], esize)
                        addr = col + (r0 + lane * kElems) * esize
                        assert got == mem[addr:addr + 16], (esize, kRowThreads, lane, offs[lane])
                        checked += 1
print("slices checked:", checked)
