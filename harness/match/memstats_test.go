package match_test

import "runtime"

type runtimeMemStats = runtime.MemStats

func readMemStats(s *runtime.MemStats) {
	runtime.GC()
	runtime.ReadMemStats(s)
}
