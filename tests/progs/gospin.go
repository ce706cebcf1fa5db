// gospin.go - a Go program that profiles itself with runtime/pprof for
// the pprof tests: about 3/4 of its CPU time in hotWork, 1/4 in coldWork.
// Usage: gospin OUT.prof SECONDS
package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"time"
)

var sink uint64

//go:noinline
func hotWork(n int) {
	acc := uint64(0)
	for i := 0; i < n; i++ {
		acc += uint64(i) * 2654435761
	}
	sink += acc
}

//go:noinline
func coldWork(n int) {
	acc := uint64(0)
	for i := 0; i < n; i++ {
		acc ^= uint64(i) * 40503
	}
	sink += acc
}

func main() {
	f, err := os.Create(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	secs, _ := strconv.ParseFloat(os.Args[2], 64)
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	rng := uint64(0x9e3779b97f4a7c15)
	for time.Now().Before(end) {
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		n := 20000 + int(rng%20000)
		hotWork(3 * n)
		coldWork(n)
	}
	pprof.StopCPUProfile()
	f.Close()
}
