# Per op and vector count: the fma-x-stage A/B (runs/fp32-{base,new}-{1,2}.csv, medians of the two
# repetitions), its time over the base's, % of the stream read, and speed-up over Sgemm.
#   python3 fp32_by_nrhs.py
import csv, math, sys, collections, statistics
def load(files):
    t = collections.defaultdict(list); rec = {}
    for f in files:
        for r in csv.DictReader(open(f)):
            if not r['us']: continue
            k = (r['op'], r['tag'], int(r['nrhs']), r['lib'])
            t[k].append(float(r['us'])); rec[k] = r
    return {k: statistics.median(v) for k, v in t.items()}, rec
base, rb = load(['runs/fp32-base-1.csv', 'runs/fp32-base-2.csv'])
new, rn = load(['runs/fp32-new-1.csv', 'runs/fp32-new-2.csv'])
gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float('nan')
print("op nrhs lib: new/base time geo (min, max) | %bound base -> new | speed-up over Sgemm base -> new (worst)")
for op in ('T', 'N'):
    for nrhs in (1, 2, 4, 8, 12, 16):
        for lib in ('xgemv', 'xgemv-nrhs'):
            ks = [k for k in new if k[0] == op and k[2] == nrhs and k[3] == lib and k in base]
            if not ks: continue
            ratios = [new[k] / base[k] for k in ks]
            pb = [float(rb[k]['pct_bound']) for k in ks if rb[k]['pct_bound']]
            pn = [float(rn[k]['pct_bound']) for k in ks if rn[k]['pct_bound']]
            # speed-up over cublas-gemm: gemm time / lib time, per run set
            gb = [base[(op, k[1], nrhs, 'cublas-gemm')] / base[k] for k in ks if (op, k[1], nrhs, 'cublas-gemm') in base]
            gn = [new[(op, k[1], nrhs, 'cublas-gemm')] / new[k] for k in ks if (op, k[1], nrhs, 'cublas-gemm') in new]
            print(f"{op} {nrhs:2d} {lib:10s}: {gm(ratios):.3f} ({min(ratios):.3f}, {max(ratios):.3f}) | {statistics.mean(pb):5.1f} -> {statistics.mean(pn):5.1f} | "
                  + (f"{gm(gb):.2f}x -> {gm(gn):.2f}x (worst {min(gb):.2f} -> {min(gn):.2f})" if gb else ""))
