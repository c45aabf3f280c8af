package filters

func generalFuseKinds() []staticKind { return nil }

type decodeCase = struct {
	name string
	typ  filterType
	ver  uint8
	body []byte
}

func generalDecodeCases() []decodeCase { return nil }

func generalFuzzTargets() map[string]string { return nil }
