package secrets

const keyringName = "Credential Manager"

const dataUnderHome = false
