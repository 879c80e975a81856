//go:build !amd64 || purego

package embed

const asmAvailable = false

func avx2Kernels() *kernelSet   { panic("unreachable") }
func avx512Kernels() *kernelSet { panic("unreachable") }
