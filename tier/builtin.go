package tier

// builtins are the tiers a name on the command line selects. Each says where
// its figures come from; docs/tiers.md discusses them. Figures not measured
// by mdk calibrate are assumptions of the right order of magnitude, to be
// replaced by a tier file measured on the machine that matters.
var builtins = []Tier{
	{
		Name: "zram",
		Source: "mdk calibrate --tier zram on Linux 6.18, lzo-rle, 2 vCPUs (docs/tiers.md): content 'third' " +
			"(a third of each page random, the rest zeros; about 2.9:1); swap-in timed as a touch after " +
			"madvise(MADV_PAGEOUT), mean as CPU time; memory from mm_stat's mem_used_total",
		Measured:           true,
		PageSizeBytes:      4096,
		PromotionNs:        Latency{Samples: 16384, Mean: 10533, P50: 6720, P99: 44997, Max: 278800972, MeanWall: 143991},
		ResidentTouchNs:    &Latency{Samples: 16384, Mean: 338, P50: 280, P99: 611, Max: 40130219, MeanWall: 5178},
		DemotionNsPerPage:  6028,
		StoredBytesPerPage: 1426,
		Content:            "third",
	},
	{
		Name: "zswap",
		Source: "not measured (turning zswap on changes every swap device of the host; it is measured in a guest): " +
			"assumed equal to the zram figures measured here (same compressor, lzo-rle, and zsmalloc pool; zswap " +
			"adds a tree lookup per fault); zswap keeps the compressed copy in RAM as zram does",
		PageSizeBytes:      4096,
		PromotionNs:        Latency{Mean: 10533, P50: 6720, P99: 44997, Max: 278800972},
		DemotionNsPerPage:  6028,
		StoredBytesPerPage: 1426,
		Content:            "third",
	},
	{
		Name: "ssd",
		Source: "not measured: a swap device on an NVMe SSD; 4 KiB random reads at queue depth 1 take " +
			"about 80-100 us on common data-centre NVMe drives (vendor datasheets), plus the fault; " +
			"nothing stays in RAM (the swap cache is ignored)",
		PageSizeBytes:      4096,
		PromotionNs:        Latency{Mean: 100000, P50: 90000, P99: 300000, Max: 2000000},
		DemotionNsPerPage:  10000,
		StoredBytesPerPage: 0,
	},
	{
		Name: "cxl",
		Source: "not measured: a CXL memory expander or far NUMA node, pages demoted by migration and " +
			"promoted on a NUMA hint fault (as in TPP, Maruf et al., ASPLOS 2023); CXL loads take about " +
			"170-250 ns against about 100 ns for local DRAM (The Next Platform, 'Just How Bad Is CXL " +
			"Memory Latency?', 2022); a promotion is charged a hint fault, the page's first far accesses " +
			"and a 4 KiB migration, about 5 us; the demoted page uses no local memory",
		PageSizeBytes:      4096,
		PromotionNs:        Latency{Mean: 5000, P50: 4000, P99: 15000, Max: 100000},
		DemotionNsPerPage:  3000,
		StoredBytesPerPage: 0,
	},
}
