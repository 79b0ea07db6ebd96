/*
 * clock.c - the SM clock while a case's timed repetitions run, sampled
 * through NVML (dlopen, optional) by a thread every 0.5 ms between
 * clock_begin() and clock_end().
 *
 * The hardware counters' clock (sm__cycles_elapsed.avg.per_second) comes
 * from a separate, replayed invocation with idle gaps around it: under the
 * power limit it is not the clock the timed repetitions ran at (a GEMM
 * timed back to back for ~10 ms runs near its burst clock, its lone counter
 * pass lower or higher). The fit divides each case's time by the clock it
 * ran at, so it needs this one.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include "runner.h"

typedef void *nvml_device;
enum { NVML_SUCCESS = 0, NVML_CLOCK_SM = 1 };

static struct {
	int ok;
	nvml_device dev;
	int (*clock)(nvml_device, int, unsigned *);
	pthread_t th;
	pthread_mutex_t mu;
	int armed, quit;
	double sum_hz;
	long n;
} g = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void *sampler(void *arg)
{
	(void)arg;
	struct timespec ts = {0, 500000};
	for (;;) {
		pthread_mutex_lock(&g.mu);
		int quit = g.quit, armed = g.armed;
		pthread_mutex_unlock(&g.mu);
		if (quit)
			break;
		unsigned mhz = 0;
		if (armed && g.clock(g.dev, NVML_CLOCK_SM, &mhz) == NVML_SUCCESS && mhz > 0) {
			pthread_mutex_lock(&g.mu);
			if (g.armed) {
				g.sum_hz += mhz * 1e6;
				g.n++;
			}
			pthread_mutex_unlock(&g.mu);
		}
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int clock_init(const char *uuid)
{
	void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return -1;
	int (*init)(void) = (int (*)(void))dlsym(h, "nvmlInit_v2");
	int (*by_uuid)(const char *, nvml_device *) =
		(int (*)(const char *, nvml_device *))dlsym(h, "nvmlDeviceGetHandleByUUID");
	g.clock = (int (*)(nvml_device, int, unsigned *))dlsym(h, "nvmlDeviceGetClockInfo");
	if (!init || !by_uuid || !g.clock || init() != NVML_SUCCESS ||
	    by_uuid(uuid, &g.dev) != NVML_SUCCESS)
		return -1;
	if (pthread_create(&g.th, NULL, sampler, NULL))
		return -1;
	g.ok = 1;
	return 0;
}

void clock_begin(void)
{
	if (!g.ok)
		return;
	pthread_mutex_lock(&g.mu);
	g.sum_hz = 0;
	g.n = 0;
	g.armed = 1;
	pthread_mutex_unlock(&g.mu);
}

double clock_end(void)
{
	if (!g.ok)
		return 0;
	pthread_mutex_lock(&g.mu);
	g.armed = 0;
	double hz = g.n ? g.sum_hz / (double)g.n : 0;
	pthread_mutex_unlock(&g.mu);
	return hz;
}

void clock_shutdown(void)
{
	if (!g.ok)
		return;
	pthread_mutex_lock(&g.mu);
	g.quit = 1;
	pthread_mutex_unlock(&g.mu);
	pthread_join(g.th, NULL);
	g.ok = 0;
}
