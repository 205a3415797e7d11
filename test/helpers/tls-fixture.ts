/**
 * A self-signed certificate and its key for 127.0.0.1 and localhost, for tests that run a TLS
 * server on loopback (a provider's wss://, a gateway behind its own TLS): made once with
 * `openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 36500
 * -subj /CN=localhost -addext subjectAltName=IP:127.0.0.1,DNS:localhost`. Not a secret: nothing
 * trusts it but the tests that pass it as their client's `ca`.
 */
export const TLS_CERT = `-----BEGIN CERTIFICATE-----
MIIBnDCCAUGgAwIBAgIUah9+UBXtiQtZ4ODDxsI5d6pYws8wCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTIwNzA5NTQwMVoYDzIxMjYxMTEz
MDk1NDAxWjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAS1pEehqGTmP+i8neqDhZoyZHnwKTymyf8l8mkp9ndphUiMTY2/bMnE
snhcVy0nmhCC6QoMgF3+k9sUSTSPmNF/o28wbTAdBgNVHQ4EFgQUrIrKcJTJUXT9
cU0PbEGIRhrxSQAwHwYDVR0jBBgwFoAUrIrKcJTJUXT9cU0PbEGIRhrxSQAwDwYD
VR0TAQH/BAUwAwEB/zAaBgNVHREEEzARhwR/AAABgglsb2NhbGhvc3QwCgYIKoZI
zj0EAwIDSQAwRgIhANFfYeKq8I6yjVFZHZF39WtiVsu0ewlJSJYtNg96jEAoAiEA
wTaMaRadS4jP9x1hcOG+TCqFQJjYXc8GVIPbx/bQhj8=
-----END CERTIFICATE-----
`;

export const TLS_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgSgNseabQrr+M4Xu+
WTKxcqFurDNLv21UMNeDJKLWYEuhRANCAAS1pEehqGTmP+i8neqDhZoyZHnwKTym
yf8l8mkp9ndphUiMTY2/bMnEsnhcVy0nmhCC6QoMgF3+k9sUSTSPmNF/
-----END PRIVATE KEY-----
`;
