/* fcgi_trivial.c: the ceiling baseline for benchmarks. A libfcgi responder
 * that reads the body and answers a fixed 200-byte JSON document; it does
 * nothing else, so Phantom's throughput is measured against pure libfcgi. */
#include <fcgiapp.h>
#include <stdio.h>
#include <string.h>

int
main(void)
{
	static const char body[] =
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":\"complete\",\"content\":"
		"[{\"type\":\"text\",\"text\":\"hello from the trivial responder, padded to be "
		"two hundred bytes long........\"}],\"isError\":false}}";
	FCGX_Request req;
	char buf[8192], head[160];
	if (FCGX_Init() != 0 || FCGX_InitRequest(&req, 0, 0) != 0)
		return 1;
	while (FCGX_Accept_r(&req) >= 0) {
		int n = snprintf(head, sizeof head,
				 "Status: 200 OK\r\nContent-Type: application/json\r\n"
				 "Content-Length: %d\r\n\r\n", (int)(sizeof body - 1));
		while (FCGX_GetStr(buf, sizeof buf, req.in) > 0)
			;
		FCGX_PutStr(head, n, req.out);
		FCGX_PutStr(body, (int)(sizeof body - 1), req.out);
		FCGX_Finish_r(&req);
	}
	return 0;
}
