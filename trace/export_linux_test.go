package trace

// StateHuge reports whether a HistWalker's page state is in a mapping
// advised to use huge pages.
func StateHuge(hw *HistWalker) bool {
	if hw.p32 != nil {
		return hw.p32.mem.huge
	}
	return hw.p64.mem.huge
}

// HugeMin is the least state put in huge pages, in bytes.
const HugeMin = hugeMin
