package secrets

const keyringName = "Keychain"

const dataUnderHome = false
