# The forced row-block groups (forced-t_rowblock_{32,16,8}.log: XGEMV_KERNEL_VARIANT on main's library,
# one run each, llm and llm-small, bf16 and fp32): xgemv's % of the stream read and speed-up over
# cuBLAS per shape and group, and which group read fastest.
#   python3 forced_groups.py                  (here)
#   python3 ../candidates-ab/forced_groups.py  (in candidates-ab-5022d28/, a second call's runs)
import collections, re
d = collections.defaultdict(dict)
for g in ('32', '16', '8'):
    for line in open(f'forced-t_rowblock_{g}.log'):
        f = line.split()
        if len(f) > 9 and f[0].startswith('[') and f[5] == 'xgemv':
            d[(f[1], f[4])][g] = (float(f[8]), f[9])
best = collections.Counter()
for (dtype, tag), v in sorted(d.items()):
    if len(v) < 3: continue
    b = max(v, key=lambda g: v[g][0]); best[b] += 1
    print(f"{dtype} {tag:24s} " + "  ".join(f"{g}:{v[g][0]:5.1f} ({v[g][1]})" for g in ('32', '16', '8'))
          + f"   fastest {b}")
print("fastest group:", dict(best))
