/*
 * completion.c - `llmsim completion bash|zsh`: the shell completion script,
 * generated from the command table (cli_commands) and the option table of
 * every command and verb, read through the args probe (args.h): each
 * command is called with "--help" while the probe is set, so it hands over
 * its table and does nothing else. A verb dispatcher hands over its usage,
 * whose "verbs:" (or "kinds:") list names the verbs, as the man page reads
 * it (scripts/gen-man.sh). A command that picks another table by an
 * option's value (plan --workload serve) is probed once per value of each
 * choice option and the tables merged.
 *
 * Values complete by what they are: a choice option's choices; --gpu a
 * shipped GPU's names and aliases; --model and --draft a shipped model's
 * (and files); an option whose value names a file (FILE, PATH, DIR, a
 * .yaml/.tsv/.json metavar) files; numbers nothing. The names are the data
 * folder's when the script is made. The build makes both scripts and
 * `cmake --install` puts them where bash-completion and zsh look.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/paths.h"
#include "hw/gpu.h"
#include "models/model.h"
#include "args.h"
#include "commands.h"

#define MAX_OPTS 64
#define MAX_VERBS 16
#define NAMES_MAX 4096

enum value { V_NONE, V_FLAG, V_CHOICE, V_GPU, V_MODEL, V_FILE };

struct copt {
	char name[40];
	char help[160];
	char metavar[40];
	char choices[256]; /* space-separated */
	enum value value;
};

/* One command or verb: its options and what its positional argument is. */
struct ctable {
	char verb[32];      /* "" for a command without verbs */
	char about[96];     /* its line in the dispatcher's list (zsh shows it) */
	enum value pos;     /* V_NONE: takes no positional argument */
	char pos_meta[40];
	char pos_choices[64]; /* pos V_CHOICE */
	struct copt opts[MAX_OPTS];
	int nopts;
};

struct ccmd {
	const struct cli_command *c;
	int has_verbs;
	struct ctable t[MAX_VERBS]; /* t[0] alone when has_verbs is 0 */
	int n;
};

/* ---- reading the tables ---- */

struct catch {
	struct ctable *dst; /* where a parse's table goes */
	char verbs[MAX_VERBS][32], verb_about[MAX_VERBS][96];
	int nverbs, parsed;
};

static int names_a_file(const char *meta)
{
	static const char *const marks[] = {"FILE", "PATH", "DIR", ".yaml", ".tsv", ".json", ".db"};
	for (size_t i = 0; meta && i < sizeof marks / sizeof marks[0]; i++)
		if (strstr(meta, marks[i]))
			return 1;
	return 0;
}

static enum value value_of(const struct llmsim_opt *o)
{
	if (o->type == LLMSIM_ARG_FLAG)
		return V_FLAG;
	if (o->type == LLMSIM_ARG_CHOICE)
		return V_CHOICE;
	if (!strcmp(o->name, "gpu"))
		return V_GPU;
	if (!strcmp(o->name, "model") || !strcmp(o->name, "draft"))
		return V_MODEL;
	if (o->type == LLMSIM_ARG_STRING && names_a_file(o->metavar))
		return V_FILE;
	return V_NONE;
}

static void add_opt(struct ctable *t, const struct llmsim_opt *o)
{
	for (int i = 0; i < t->nopts; i++)
		if (!strcmp(t->opts[i].name, o->name))
			return;
	if (t->nopts == MAX_OPTS)
		return;
	struct copt *c = &t->opts[t->nopts++];
	snprintf(c->name, sizeof c->name, "%s", o->name);
	snprintf(c->help, sizeof c->help, "%s", o->help ? o->help : "");
	snprintf(c->metavar, sizeof c->metavar, "%s", o->metavar ? o->metavar : "");
	c->value = value_of(o);
	c->choices[0] = 0;
	for (int j = 0; c->value == V_CHOICE && o->choices[j]; j++) {
		size_t l = strlen(c->choices);
		snprintf(c->choices + l, sizeof c->choices - l, "%s%s", j ? " " : "", o->choices[j]);
	}
}

/* The verbs of a dispatcher's usage: the first word of each line indented
 * two spaces after a "verbs:", "kinds:" or "subcommands:" line, up to a
 * blank line, and the rest of that line as its description. */
static void read_verbs(struct catch *k, const char *about)
{
	int in = 0;
	for (const char *l = about; l && *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		if (!len)
			in = 0;
		else if ((len == 6 && !strncmp(l, "verbs:", 6)) || (len == 6 && !strncmp(l, "kinds:", 6)) ||
			 (len == 12 && !strncmp(l, "subcommands:", 12)))
			in = 1;
		else if (in && len > 2 && l[0] == ' ' && l[1] == ' ' && islower((unsigned char)l[2]) &&
			 k->nverbs < MAX_VERBS) {
			size_t w = 2;
			while (w < len && (isalnum((unsigned char)l[w]) || l[w] == '-' || l[w] == '_'))
				w++;
			snprintf(k->verbs[k->nverbs], sizeof k->verbs[0], "%.*s", (int)(w - 2), l + 2);
			while (w < len && l[w] == ' ')
				w++;
			/* kinds: list their options there; describe those by name */
			snprintf(k->verb_about[k->nverbs], sizeof k->verb_about[0], "%.*s",
				 l[w] == '-' || l[w] == '"' ? 0 : (int)(len - w), l + w);
			k->nverbs++;
		}
		l = e ? e + 1 : NULL;
	}
}

static void on_probe(void *ctx, int parsing, const char *cmd, const char *synopsis,
		     const char *about, const struct llmsim_opt *opts, int nopts)
{
	(void)cmd;
	struct catch *k = ctx;
	if (!parsing) {
		read_verbs(k, about);
		return;
	}
	k->parsed = 1;
	for (int i = 0; i < nopts; i++)
		add_opt(k->dst, &opts[i]);
	/* a synopsis that starts with a metavar takes a positional argument */
	if (synopsis && isupper((unsigned char)synopsis[0])) {
		size_t w = strcspn(synopsis, " [");
		snprintf(k->dst->pos_meta, sizeof k->dst->pos_meta, "%.*s", (int)w, synopsis);
		k->dst->pos = strstr(k->dst->pos_meta, "NAME") ? V_MODEL : V_FILE;
	}
}

/* Probe argv (ending in "--help") into t; then once more per value of each
 * choice option, merging what a value switches in. */
static void probe_table(const struct cli_command *c, const char *verb, struct ctable *t,
			struct catch *k)
{
	char *argv[6];
	int a = 0;
	argv[a++] = (char *)c->name;
	if (verb)
		argv[a++] = (char *)verb;
	argv[a] = "--help";
	argv[a + 1] = NULL;
	k->dst = t;
	struct cli_setup none = {0}; /* --help loads nothing */
	c->fn(a + 1, argv, &none);
	for (int i = 0; i < t->nopts; i++) {
		if (t->opts[i].value != V_CHOICE)
			continue;
		char choices[256], opt[48];
		snprintf(choices, sizeof choices, "%s", t->opts[i].choices);
		snprintf(opt, sizeof opt, "--%s", t->opts[i].name);
		for (char *v = strtok(choices, " "); v; v = strtok(NULL, " ")) {
			argv[a] = opt;
			argv[a + 1] = v;
			argv[a + 2] = "--help";
			argv[a + 3] = NULL;
			c->fn(a + 3, argv, &none);
		}
	}
}

static void read_command(const struct cli_command *c, struct ccmd *out)
{
	struct catch k;
	memset(&k, 0, sizeof k);
	memset(out, 0, sizeof *out);
	out->c = c;
	struct llmsim_args_probe p = {on_probe, &k};
	llmsim_args_set_probe(&p);
	probe_table(c, NULL, &out->t[0], &k);
	if (!k.parsed && k.nverbs) {
		out->has_verbs = 1;
		memset(&out->t[0], 0, sizeof out->t[0]);
		int nverbs = k.nverbs;
		char verbs[MAX_VERBS][32], about[MAX_VERBS][96];
		memcpy(verbs, k.verbs, sizeof verbs);
		memcpy(about, k.verb_about, sizeof about);
		for (int v = 0; v < nverbs; v++) {
			struct ctable *t = &out->t[out->n++];
			memcpy(t->verb, verbs[v], sizeof t->verb); /* same sizes */
			memcpy(t->about, about[v], sizeof t->about);
			probe_table(c, verbs[v], t, &k);
		}
	} else {
		out->n = 1;
	}
	llmsim_args_set_probe(NULL);
}

/* ---- the names of the data folder ---- */

struct names {
	char s[NAMES_MAX];
	int gpu;
};

static void add_name(struct names *n, const char *name)
{
	size_t l = strlen(n->s);
	if (l + strlen(name) + 2 < sizeof n->s)
		snprintf(n->s + l, sizeof n->s - l, "%s%s", l ? " " : "", name);
}

static void name_one(const char *path, void *ctx)
{
	struct names *n = ctx;
	struct llmsim_err err = {0};
	if (n->gpu) {
		struct llmsim_gpu g;
		if (llmsim_gpu_load_file(path, &g, &err))
			return;
		add_name(n, g.name);
		for (int i = 0; i < g.naliases; i++)
			add_name(n, g.aliases[i]);
	} else {
		struct llmsim_model m;
		if (llmsim_model_load_file(path, &m, &err))
			return;
		add_name(n, m.name);
		for (int i = 0; i < m.naliases; i++)
			add_name(n, m.aliases[i]);
	}
}

/* ---- bash ---- */

static const char *names_var(enum value v)
{
	return v == V_GPU ? "$_llmsim_gpus" : "$_llmsim_models";
}

/* The compgen words completing a value of kind v (choices for V_CHOICE). */
static void bash_value(FILE *f, enum value v, const char *choices)
{
	switch (v) {
	case V_CHOICE:
		fprintf(f, "COMPREPLY=($(compgen -W \"%s\" -- \"$cur\"))", choices);
		break;
	case V_GPU:
	case V_MODEL:
		fprintf(f, "COMPREPLY=($(compgen -W \"%s\" -- \"$cur\") $(compgen -f -- \"$cur\"))",
			names_var(v));
		break;
	case V_FILE:
		fputs("COMPREPLY=($(compgen -f -- \"$cur\"))", f);
		break;
	default:
		fputs("COMPREPLY=()", f);
	}
}

static void bash_key(FILE *f, const struct ccmd *c, const struct ctable *t)
{
	if (c->has_verbs)
		fprintf(f, "%s %s", c->c->name, t->verb);
	else
		fprintf(f, "%s", c->c->name);
}

/* Is option o of table v of command i the first of its arm: the first
 * with its way of completing (and, for choices, its list)? */
static int first_of_arm(const struct ccmd *cmds, size_t i0, int v0, int o0, enum value pass)
{
	const struct copt *a = &cmds[i0].t[v0].opts[o0];
	for (size_t i = 0; i <= i0; i++)
		for (int v = 0; v < cmds[i].n; v++)
			for (int o = 0; o < cmds[i].t[v].nopts; o++) {
				if (i == i0 && v == v0 && o == o0)
					return 1;
				const struct copt *b = &cmds[i].t[v].opts[o];
				if ((int)b->value == (int)pass &&
				    (pass != V_CHOICE || !strcmp(b->choices, a->choices)))
					return 0;
			}
	return 1;
}

static void write_bash(FILE *f, const struct ccmd *cmds, size_t n, const struct names *gpus,
		       const struct names *models)
{
	fprintf(f, "# bash completion for llmsim, generated by `llmsim completion bash` (llmsim %s):\n"
		   "# the command table and every command's options. Source it, or install it as\n"
		   "# share/bash-completion/completions/llmsim (cmake --install does).\n",
		llmsim_version());
	fprintf(f, "_llmsim_gpus=\"%s\"\n_llmsim_models=\"%s\"\n\n", gpus->s, models->s);
	fputs("_llmsim() {\n"
	      "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
	      "\tlocal cmd=${COMP_WORDS[1]} key at=2\n"
	      "\t# --opt=value: bash splits at '='\n"
	      "\tif [ \"$cur\" = \"=\" ]; then cur=; elif [ \"$prev\" = \"=\" ]; then prev=${COMP_WORDS[COMP_CWORD-2]}; fi\n"
	      "\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n\t\tCOMPREPLY=($(compgen -W \"",
	      f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s ", cmds[i].c->name);
	fputs("help --help --version\" -- \"$cur\"))\n\t\treturn\n\tfi\n", f);
	fputs("\tcase $cmd in\n\thelp)\n\t\t[ \"$COMP_CWORD\" -eq 2 ] && COMPREPLY=($(compgen -W \"", f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%s", i ? " " : "", cmds[i].c->name);
	fputs("\" -- \"$cur\"))\n\t\treturn ;;\n", f);
	for (size_t i = 0; i < n; i++) {
		if (!cmds[i].has_verbs)
			continue;
		fprintf(f, "\t%s)\n\t\tif [ \"$COMP_CWORD\" -eq 2 ]; then\n\t\t\tCOMPREPLY=($(compgen -W \"",
			cmds[i].c->name);
		for (int v = 0; v < cmds[i].n; v++)
			fprintf(f, "%s%s", v ? " " : "", cmds[i].t[v].verb);
		fputs("\" -- \"$cur\"))\n\t\t\treturn\n\t\tfi\n\t\tcmd=\"$cmd ${COMP_WORDS[2]}\"\n"
		      "\t\tat=3 ;;\n",
		      f);
	}
	fputs("\tesac\n", f);
	/* after "--" (trace capture -- CMD): the shell's own completion */
	fputs("\tlocal i\n\tfor ((i = at; i < COMP_CWORD; i++)); do\n"
	      "\t\t[ \"${COMP_WORDS[i]}\" = \"--\" ] && { COMPREPLY=($(compgen -c -f -- \"$cur\")); return; }\n"
	      "\tdone\n",
	      f);
	/* the value of the option before the cursor: one arm per way of
	 * completing it, listing every command|option that completes so */
	fputs("\tcase \"$cmd|$prev\" in\n", f);
	for (int pass = V_NONE; pass <= V_FILE; pass++) {
		if (pass == V_FLAG)
			continue;
		for (size_t i0 = 0; i0 < n; i0++)
			for (int v0 = 0; v0 < cmds[i0].n; v0++)
				for (int o0 = 0; o0 < cmds[i0].t[v0].nopts; o0++) {
					const struct copt *a = &cmds[i0].t[v0].opts[o0];
					if ((int)a->value != pass ||
					    !first_of_arm(cmds, i0, v0, o0, (enum value)pass))
						continue;
					int sep = 0;
					for (size_t i = 0; i < n; i++)
						for (int v = 0; v < cmds[i].n; v++)
							for (int o = 0; o < cmds[i].t[v].nopts; o++) {
								const struct copt *b = &cmds[i].t[v].opts[o];
								if (b->value != a->value ||
								    (pass == V_CHOICE && strcmp(b->choices, a->choices)))
									continue;
								fputs(sep++ ? " | \\\n\t\"" : "\t\"", f);
								bash_key(f, &cmds[i], &cmds[i].t[v]);
								fprintf(f, "|--%s\"", b->name);
							}
					fputs(")\n\t\t", f);
					bash_value(f, a->value, a->choices);
					fputs("\n\t\treturn ;;\n", f);
				}
	}
	fputs("\tesac\n", f);
	/* options, or the positional argument */
	fputs("\tcase $cmd in\n", f);
	for (size_t i = 0; i < n; i++)
		for (int v = 0; v < cmds[i].n; v++) {
			const struct ctable *t = &cmds[i].t[v];
			fputs("\t\"", f);
			bash_key(f, &cmds[i], t);
			fputs("\")\n\t\tif [[ $cur == -* ]]; then\n\t\t\tCOMPREPLY=($(compgen -W \"", f);
			for (int o = 0; o < t->nopts; o++)
				fprintf(f, "--%s ", t->opts[o].name);
			fputs("--wide --help\" -- \"$cur\"))\n", f);
			if (t->pos != V_NONE) {
				enum value pv = t->pos == V_MODEL && !strcmp(cmds[i].c->name, "hw") ? V_GPU
												      : t->pos;
				fputs("\t\telse\n\t\t\t", f);
				bash_value(f, pv, t->pos_choices);
				fputs("\n", f);
			}
			fputs("\t\tfi ;;\n", f);
		}
	fputs("\tesac\n}\ncomplete -o filenames -F _llmsim llmsim\n", f);
}

/* ---- zsh ---- */

/* s with what _arguments and _describe treat specially escaped, for use
 * inside a single-quoted zsh word. */
static void zsh_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", f);
		else if (*s == '[' || *s == ']' || *s == ':' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else
			fputc(*s, f);
	}
}

static void zsh_value(FILE *f, enum value v, const char *meta, const char *choices)
{
	fputc(':', f);
	zsh_text(f, meta[0] ? meta : "value");
	switch (v) {
	case V_CHOICE:
		fprintf(f, ":(%s)", choices);
		break;
	case V_GPU:
		fputs(":_llmsim_gpu_names", f);
		break;
	case V_MODEL:
		fputs(":_llmsim_model_names", f);
		break;
	case V_FILE:
		fputs(":_files", f);
		break;
	default:
		fputs(": ", f);
	}
}

static void zsh_table(FILE *f, const struct ccmd *c, const struct ctable *t)
{
	fputs("\t\t_arguments -s", f);
	for (int o = 0; o < t->nopts; o++) {
		const struct copt *p = &t->opts[o];
		fprintf(f, " \\\n\t\t\t'--%s[", p->name);
		zsh_text(f, p->help);
		fputc(']', f);
		if (p->value != V_FLAG)
			zsh_value(f, p->value, p->metavar, p->choices);
		fputc('\'', f);
	}
	fputs(" \\\n\t\t\t'--wide[tables show every column]'", f);
	fputs(" \\\n\t\t\t'--help[show this help]'", f);
	if (t->pos != V_NONE) {
		enum value pv = t->pos == V_MODEL && !strcmp(c->c->name, "hw") ? V_GPU : t->pos;
		fputs(" \\\n\t\t\t'1", f);
		zsh_value(f, pv, t->pos_meta, t->pos_choices);
		fputc('\'', f);
	}
	if (!strcmp(c->c->name, "trace") && !strcmp(t->verb, "capture"))
		fputs(" \\\n\t\t\t'*::command:_normal'", f);
	fputs(" ;;\n", f);
}

static void write_zsh(FILE *f, const struct ccmd *cmds, size_t n, const struct names *gpus,
		      const struct names *models)
{
	fprintf(f, "#compdef llmsim\n"
		   "# zsh completion for llmsim, generated by `llmsim completion zsh` (llmsim %s):\n"
		   "# the command table and every command's options. Install it as _llmsim in a\n"
		   "# folder of $fpath (cmake --install uses share/zsh/site-functions).\n",
		llmsim_version());
	fprintf(f, "_llmsim_gpus='%s'\n_llmsim_models='%s'\n\n", gpus->s, models->s);
	fputs("_llmsim_gpu_names() {\n"
	      "\t_alternative \"names:GPU:(${=_llmsim_gpus})\" 'files:file:_files'\n}\n"
	      "_llmsim_model_names() {\n"
	      "\t_alternative \"names:model:(${=_llmsim_models})\" 'files:file:_files'\n}\n\n",
	      f);
	fputs("_llmsim() {\n\tlocal -a cmds verbs\n\tcmds=(\n", f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "\t\t'%s:", cmds[i].c->name);
		zsh_text(f, cmds[i].c->summary);
		fputs("'\n", f);
	}
	fputs("\t\t'help:show the options of a command'\n\t)\n"
	      "\tif (( CURRENT == 2 )); then\n"
	      "\t\t_describe -t commands 'llmsim command' cmds\n\t\treturn\n\tfi\n"
	      "\tlocal cmd=$words[2]\n\tcase $cmd in\n"
	      "\thelp)\n\t\t(( CURRENT == 3 )) && _describe -t commands 'llmsim command' cmds\n"
	      "\t\treturn ;;\n",
	      f);
	for (size_t i = 0; i < n; i++) {
		if (!cmds[i].has_verbs)
			continue;
		fprintf(f, "\t%s)\n\t\tverbs=(", cmds[i].c->name);
		for (int v = 0; v < cmds[i].n; v++) {
			fprintf(f, "%s'%s:", v ? " " : "", cmds[i].t[v].verb);
			zsh_text(f, cmds[i].t[v].about);
			fputc('\'', f);
		}
		fputs(")\n\t\tif (( CURRENT == 3 )); then\n"
		      "\t\t\t_describe -t verbs 'verb' verbs\n\t\t\treturn\n\t\tfi\n"
		      "\t\tcmd=\"$cmd $words[3]\"\n\t\tshift words\n\t\t(( CURRENT-- )) ;;\n",
		      f);
	}
	fputs("\tesac\n\tshift words\n\t(( CURRENT-- ))\n\tcase $cmd in\n", f);
	for (size_t i = 0; i < n; i++)
		for (int v = 0; v < cmds[i].n; v++) {
			fputs("\t'", f);
			bash_key(f, &cmds[i], &cmds[i].t[v]);
			fputs("')\n", f);
			zsh_table(f, &cmds[i], &cmds[i].t[v]);
		}
	fputs("\tesac\n}\n\n_llmsim \"$@\"\n", f);
}

int cmd_completion(int argc, char **argv, const struct cli_setup *s)
{
	(void)s;
	const char *cmd = "llmsim completion";
	static const char *const shells[] = {"bash", "zsh", NULL};
	int npos = 0, json = 0;
	char *pos[1];
	const struct llmsim_opt opts[] = {
		{"json", LLMSIM_ARG_FLAG, &json, NULL, "JSON on stdout: the shell and the script",
		 0, NULL, NULL},
	};
	int rc = llmsim_args_parse(
	    cmd, "bash|zsh [--json]",
	    "Print the completion script for bash or zsh: every command, verb and\n"
	    "option, choice values, and the shipped GPU and model names.\n"
	    "  source <(llmsim completion bash)     # bash, this shell\n"
	    "  llmsim completion zsh > ~/.zfunc/_llmsim   # zsh, a folder of $fpath\n"
	    "cmake --install puts both where bash-completion and zsh find them.",
	    argc - 1, argv + 1, opts, 1, pos, 1, &npos);
	if (rc)
		return rc == LLMSIM_ARGS_HELP ? 0 : 2;
	int shell = -1;
	for (int i = 0; npos == 1 && shells[i]; i++)
		if (!strcmp(pos[0], shells[i]))
			shell = i;
	if (shell < 0)
		return llmsim_args_error(cmd, "expected a shell: bash or zsh");
	size_t n;
	const struct cli_command *table = cli_commands(&n);
	struct ccmd *cmds = calloc(n, sizeof *cmds);
	if (!cmds) {
		fprintf(stderr, "%s: out of memory\n", cmd);
		return 1;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		read_command(&table[i], &cmds[k]);
		if (table[i].fn == cmd_completion) { /* this command: its shells */
			cmds[k].t[0].pos = V_CHOICE;
			snprintf(cmds[k].t[0].pos_meta, sizeof cmds[k].t[0].pos_meta, "shell");
			snprintf(cmds[k].t[0].pos_choices, sizeof cmds[k].t[0].pos_choices, "bash zsh");
		}
		k++;
	}
	struct names gpus = {.gpu = 1}, models = {.gpu = 0};
	struct llmsim_err err = {0};
	llmsim_gpu_list(name_one, &gpus, &err); /* no data folder: no names, files still */
	llmsim_model_list(name_one, &models, &err);
	char *text = NULL;
	size_t len = 0;
	FILE *f = json ? open_memstream(&text, &len) : stdout;
	if (!f) {
		free(cmds);
		fprintf(stderr, "%s: out of memory\n", cmd);
		return 1;
	}
	if (shell == 0)
		write_bash(f, cmds, k, &gpus, &models);
	else
		write_zsh(f, cmds, k, &gpus, &models);
	free(cmds);
	if (json) {
		fclose(f);
		struct llmsim_json j;
		llmsim_json_init(&j, stdout);
		llmsim_json_obj_begin(&j, NULL);
		llmsim_json_str(&j, "shell", shells[shell]);
		llmsim_json_str(&j, "script", text);
		llmsim_json_obj_end(&j);
		llmsim_json_finish(&j);
		free(text);
	}
	return 0;
}
