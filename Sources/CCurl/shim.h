// libcurl for FolderSyncWebDAV's HTTP transport on Linux (HTTPTransport+Curl.swift).
//
// URLSession on Linux runs on libcurl too, but keeps a write-readiness source on a socket after libcurl has
// stopped asking for one, so a request that waits for its answer spins on two cores. FolderSync calls libcurl
// itself instead, blocking one thread of its own per request in `curl_easy_perform`, which sleeps in poll(2).
// `curl_easy_setopt` and `curl_easy_getinfo` are variadic, which Swift cannot call: one typed wrapper per kind.
#ifndef FOLDERSYNC_CURL_SHIM_H
#define FOLDERSYNC_CURL_SHIM_H

#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

static inline CURLcode foldersync_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode foldersync_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode foldersync_curl_set_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode foldersync_curl_set_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode foldersync_curl_set_list(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

/// For CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION.
static inline CURLcode foldersync_curl_set_write_function(CURL *handle, CURLoption option, curl_write_callback value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode foldersync_curl_set_read_function(CURL *handle, curl_read_callback value) {
    return curl_easy_setopt(handle, CURLOPT_READFUNCTION, value);
}

static inline CURLcode foldersync_curl_set_seek_function(CURL *handle, curl_seek_callback value) {
    return curl_easy_setopt(handle, CURLOPT_SEEKFUNCTION, value);
}

static inline CURLcode foldersync_curl_set_progress_function(CURL *handle, curl_xferinfo_callback value) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value);
}

static inline CURLcode foldersync_curl_get_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

#endif
