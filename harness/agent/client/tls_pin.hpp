#pragma once
// The public-key pin of an agent's TLS certificate, in the form the hosts file's
// `tls_pin_sha256` and libcurl's CURLOPT_PINNEDPUBLICKEY take: "sha256//" + base64 of the
// SHA-256 of the DER SubjectPublicKeyInfo. Same value as the pipeline
//   openssl x509 -in CERT -pubkey -noout | openssl pkey -pubin -outform der |
//     openssl dgst -sha256 -binary | base64
#include <string>

namespace harness::agent {

/// Pin of the first certificate in the PEM file `cert_pem_file`.
/// Throws std::runtime_error naming the file when it cannot be read or holds no certificate.
std::string spki_pin_sha256(const std::string& cert_pem_file);

}  // namespace harness::agent
