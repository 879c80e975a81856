package engine

// The Engine's side of the optional Store operations (backend_ops.go):
// each runs after the Engine's method validated its input, and refuses
// the operation when the Store lacks the capability.

// backendOp returns e's Store as a C, or the refusal naming the
// Engine's method that was called.
func backendOp[C any](e *Engine) (C, error) {
	c, ok := e.store.(C)
	if !ok {
		return c, unsupportedOnBackend(e.backend)
	}
	return c, nil
}

// onBackend runs fn with e's Store as a C, guarded against Close; the
// refusal when the Store lacks C.
func onBackend[C, R any](e *Engine, fn func(C) (R, error)) (R, error) {
	var zero R
	c, err := backendOp[C](e)
	if err != nil {
		return zero, err
	}
	done, err := e.enterStore()
	if err != nil {
		return zero, err
	}
	defer done()
	return fn(c)
}

// onStore runs fn with e's Store, guarded against Close.
func onStore[R any](e *Engine, fn func(Store) (R, error)) (R, error) {
	done, err := e.enterStore()
	if err != nil {
		var zero R
		return zero, err
	}
	defer done()
	return fn(e.store)
}
