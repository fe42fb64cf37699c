#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/rand.h>
#include <openssl/pkcs12.h>
#include <openssl/provider.h>

// MARK: Macro wrappers (the Swift importer cannot expand function-like macros)

static inline int COpenSSL_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}
static inline long COpenSSL_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_mode(ctx, mode); }
static inline int COpenSSL_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}
static inline long COpenSSL_SSL_CTX_add1_chain_cert(SSL_CTX *ctx, X509 *certificate) {
    return SSL_CTX_add1_chain_cert(ctx, certificate);
}
static inline long COpenSSL_BIO_get_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }
static inline void COpenSSL_OPENSSL_free(void *pointer) { OPENSSL_free(pointer); }
static inline int COpenSSL_TLS1_2_VERSION(void) { return TLS1_2_VERSION; }
static inline long COpenSSL_SSL_MODE_ENABLE_PARTIAL_WRITE(void) { return SSL_MODE_ENABLE_PARTIAL_WRITE; }
static inline long COpenSSL_SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER(void) { return SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER; }
static inline long COpenSSL_SSL_MODE_RELEASE_BUFFERS(void) { return SSL_MODE_RELEASE_BUFFERS; }
static inline uint64_t COpenSSL_SSL_OP_NO_COMPRESSION(void) { return SSL_OP_NO_COMPRESSION; }
static inline uint64_t COpenSSL_SSL_OP_NO_RENEGOTIATION(void) { return SSL_OP_NO_RENEGOTIATION; }
static inline int COpenSSL_SSL_TLSEXT_ERR_OK(void) { return SSL_TLSEXT_ERR_OK; }
static inline int COpenSSL_SSL_TLSEXT_ERR_ALERT_FATAL(void) { return SSL_TLSEXT_ERR_ALERT_FATAL; }
static inline int COpenSSL_SSL_TLSEXT_ERR_NOACK(void) { return SSL_TLSEXT_ERR_NOACK; }

// MARK: Crypto module (ES256 keys, self-signed certificates, PKCS#12)

static inline EVP_PKEY *COpenSSL_EVP_EC_gen(const char *curve) { return EVP_EC_gen(curve); }
static inline int COpenSSL_EVP_PKEY_EC(void) { return EVP_PKEY_EC; }
static inline int COpenSSL_MBSTRING_ASC(void) { return MBSTRING_ASC; }
static inline int COpenSSL_sk_X509_num(const STACK_OF(X509) *stack) { return sk_X509_num(stack); }
static inline X509 *COpenSSL_sk_X509_value(const STACK_OF(X509) *stack, int index) {
    return sk_X509_value(stack, index);
}
static inline void COpenSSL_sk_X509_pop_free(STACK_OF(X509) *stack) { sk_X509_pop_free(stack, X509_free); }

#endif
