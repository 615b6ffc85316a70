module threadcost/peers

go 1.22
