//go:build !amd64 || purego

package index

// kernels returns every kernel available in this build: the portable one.
func kernels() []kernel { return []kernel{genericKernel} }

func bestKernel() kernel { return genericKernel }

func prefetch(*uint32) {}
