# A thread-level model of ring-sweep.patch's ColumnRing (issue_first, then accumulate's steps),
# run on the host: for random column ranges, slots, slot counts and ring depths, one thread's
# ring must consume the same columns in the same order as the register sweep
# (sweep_slot_columns), read each step from the stage its copy went to, wait on a group that
# holds that step (at most kStages - 1 newer groups), and never refill a stage whose step it has
# not read yet.
#   python3 ring-sweep-model.py   ->  "ranges checked: N", or an AssertionError
import random
def sweep_order(c0,c1,slot,kSlots,kUnroll):
    out=[]; j=c0+slot
    while j+(kUnroll-1)*kSlots < c1:
        out += [j+u*kSlots for u in range(kUnroll)]; j += kUnroll*kSlots
    while j < c1: out.append(j); j += kSlots
    return out
def ring_order(c0,c1,slot,kSlots,kUnroll,kStages):
    kStep=kUnroll*kSlots
    first_last=c0+slot+(kUnroll-1)*kSlots
    steps=(c1-1-first_last)//kStep+1 if first_last<c1 else 0
    stage_content={}  # stage -> (step, group index)
    groups=[]  # list of step or None
    def issue(step_cols_first, stage, full, step):
        if full: stage_content[stage]=(step, len(groups))
        groups.append(step if full else None)
    for s in range(kStages-1):
        issue(None, s, s<steps, s)
    out=[]; stage=0
    for s in range(steps):
        refill = kStages-1 if stage==0 else stage-1
        # refill must not hold an unconsumed step
        if refill in stage_content:
            st,_=stage_content[refill]; assert st < s, (st,s)
        issue(None, refill, s+kStages-1<steps, s+kStages-1)
        # wait: groups newer than s at most kStages-1 -> group of step s complete
        g=[i for i,x in enumerate(groups) if x==s][0]
        assert len(groups)-1-g <= kStages-1
        st,gi=stage_content[stage]; assert st==s, (st,s,stage)
        j=c0+slot+s*kStep
        out += [j+u*kSlots for u in range(kUnroll)]
        stage = 0 if stage==kStages-1 else stage+1
    j=c0+slot+steps*kStep
    while j<c1: out.append(j); j+=kSlots
    return out
random.seed(1); n=0
for _ in range(20000):
    kSlots=random.choice([8,32]); kUnroll=4; kStages=random.choice([2,3,6])
    c0=random.randint(0,3000); c1=c0+random.randint(0,3000); slot=random.randrange(kSlots)
    a=sweep_order(c0,c1,slot,kSlots,kUnroll); b=ring_order(c0,c1,slot,kSlots,kUnroll,kStages)
    assert a==b,(c0,c1,slot); n+=1
print("ranges checked:", n)
