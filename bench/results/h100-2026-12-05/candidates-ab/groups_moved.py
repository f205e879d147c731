# thin-wave-groups A/B, first repetition (runs/groups-{base,new}-1.csv): the shapes whose group the
# candidate moves, and the speed ratio of the others.
#   python3 groups_moved.py
import csv, math, collections, statistics
def load(f):
    t = {}; r2 = {}
    for r in csv.DictReader(open(f)):
        if not r['us']: continue
        k = (r['suite'], r['dtype'], r['tag'], r['lib']); t[k] = float(r['us']); r2[k] = r
    return t, r2
b, rb = load('runs/groups-base-1.csv'); n, rn = load('runs/groups-new-1.csv')
moved = {'qwen2.5-7b.qkv','llama3-8b.qkv','mistral-7b.qkv','llama2-13b.o','llama3.2-3b.qkv','qwen2.5-0.5b.gate_up'}
gm = lambda xs: math.exp(sum(map(math.log, xs))/len(xs))
for grp in ('moved', 'other'):
    rs=[]
    for k in n:
        if k[3] != 'xgemv' or k not in b: continue
        if (k[2] in moved) != (grp == 'moved'): continue
        if grp=='moved' and k[2]=='qwen2.5-0.5b.gate_up' and k[1]!='fp32': continue
        rs.append(b[k]/n[k])
        if grp=='moved': print(f"  {k[1]} {k[2]:22s} base {b[k]:8.2f} us ({rb[k]['pct_bound'][:5]}%, {rb[k]['speedup'][:4]}x)  new {n[k]:8.2f} us ({rn[k]['pct_bound'][:5]}%, {rn[k]['speedup'][:4]}x)  speed {b[k]/n[k]:.3f}")
    print(grp, len(rs), "speed new over base geo %.3f min %.3f max %.3f" % (gm(rs), min(rs), max(rs)))
