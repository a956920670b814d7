// Package workload is mdk's cooperative replay workload: a process that
// allocates the pages of a trace and touches each window's pages when told,
// so that a policy can be applied for real (by mdk agent) to a process whose
// accesses are known exactly, and that reports what it feels: touches per
// second and the latency distribution of its touches (a touch that swaps a
// page in is slow).
//
// # Protocol
//
// The workload reads commands from its standard input, one per line, and
// writes JSON lines to its standard output:
//
//	-> {"pid":123,"base":140000000000,"pages":5000,"page_size":4096,"windows":20}
//	<- w 0
//	-> {"window":0,"accessed":812,"born":0,"freed":0,"seconds":0.0003,...}
//	<- w 1
//	...
//	<- q                 (or end of input: the workload exits)
//
// Page k of the trace (dense ID k) is the system page at base + k*page_size.
// For "w K" the workload first releases the pages freed in window K-1
// (madvise MADV_DONTNEED), then writes one byte of every page accessed in
// window K, timing each write, then writes one byte of every page born in
// window K that is not alive (the model ignores a birth of an alive page).
// Windows must be asked in order. The memory is mapped private and
// anonymous with MADV_NOHUGEPAGE, so that every trace page is one base page
// that MADV_PAGEOUT can reclaim alone. The workload never reads the clock
// except to time its touches: its pace is the agent's window clock.
package workload
