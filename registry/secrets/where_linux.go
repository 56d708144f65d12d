package secrets

const keyringName = "Secret Service"

const dataUnderHome = true
