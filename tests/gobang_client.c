/* A tiny Gobang client in C, for the interoperability test.
 *
 *   gobang_client DIR SERVERPID COLOUR x1 y1 x2 y2 ...
 *
 * COLOUR is 1 (black) or 2 (white). It creates DIR/gbc.<pid>, signs on with
 * one native uint32_t word, then answers each move request (opcode 8) with
 * the next scripted move. It prints every word it receives and exits with
 * the opcode of the game's end (0 draw, 1 black, 2 white, 3 aborted).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static uint32_t word(unsigned pid, unsigned op, unsigned x, unsigned y) {
    return ((uint32_t)(pid & 0xFFFF) << 16) | (op << 12) | (x << 6) | y;
}

int main(int argc, char **argv) {
    if (argc < 4) return 100;
    char mine[512], server[512];
    unsigned pid = (unsigned)getpid();
    snprintf(mine, sizeof mine, "%s/gbc.%05u", argv[1], pid);
    snprintf(server, sizeof server, "%s/gbs.%05d", argv[1], atoi(argv[2]));
    unlink(mine);
    if (mkfifo(mine, 0622) != 0) return 101;
    chmod(mine, 0622);
    int in = open(mine, O_RDWR);
    int out = open(server, O_WRONLY);
    if (in < 0 || out < 0) return 102;
    uint32_t signon = word(pid, (unsigned)atoi(argv[3]), 0, 0);
    if (write(out, &signon, sizeof signon) != sizeof signon) return 103;
    int next = 4, first = 1;
    uint16_t w;
    while (read(in, &w, sizeof w) == sizeof w) {
        unsigned op = w >> 12, x = (w >> 6) & 63, y = w & 63;
        printf("%u %u %u\n", op, x, y);
        fflush(stdout);
        if (first) { unlink(mine); first = 0; }
        if (op <= 3) return (int)op;
        if (op == 8) {
            if (next + 1 >= argc) return 104;
            uint32_t move = word(pid, 4, (unsigned)atoi(argv[next]), (unsigned)atoi(argv[next + 1]));
            next += 2;
            if (write(out, &move, sizeof move) != sizeof move) return 105;
        }
    }
    return 106;
}
