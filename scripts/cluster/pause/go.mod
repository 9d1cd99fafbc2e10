module arenacluster/pause

go 1.22
