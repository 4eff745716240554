import math
meas={160:(0.914,0.905,0.955),192:(0.955,1.108,1.147),224:(1.032,1.063,1.149),256:(1.22,1.114,1.165),288:(1.2,1.422,1.243),320:(1.21,1.363,1.30),384:(1.34,1.335,1.40),448:(1.296,1.562,1.377),512:(1.265,1.565,1.414)}
def cd(a,b): return -(-a//b)
def chunks(tiles,nz,L,slots):
    best=None;cc=1
    most=min(nz,4*cd(slots,tiles))
    for c in range(1,most+1):
        w=cd(tiles*c,slots); cost=w*(cd(nz,c)+3*L)
        if best is None or cost<best: best=cost;cc=c
    return cc,best
def T(N,L,alpha,V=1,rows=48):
    sx=(32*V-2*L)//V*V; sy=rows-2*L
    x0=-L - ((-L)%V) if V>1 else -L
    tiles=cd(N-(x0+L),sx)*cd(N,sy)
    c,cost=chunks(tiles,N,L,132)
    planes=min(max(cd(N,c),1),512); grid_z=cd(N,planes)
    w=cd(tiles*grid_z,132)
    steps=planes+3*L
    return w*steps*(alpha+L)/L
for alpha in [0,0.5,1,2,3,5]:
    ok=0; rows=[]
    for N,(a,b,c) in meas.items():
        best=max((a,2),(b,3),(c,4))[1]
        pred=min((T(N,k,alpha),k) for k in (2,3,4))[1]
        ok+= best==pred; rows.append(f"{N}:{best}/{pred}")
    print(alpha, ok, ' '.join(rows))
