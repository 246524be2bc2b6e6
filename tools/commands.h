/* commands.h - one entry point per kaudit subcommand (see kaudit.c). */
#ifndef KAUDIT_COMMANDS_H
#define KAUDIT_COMMANDS_H

int cmd_run(int argc, char **argv);
int cmd_confine(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_inventory(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_contract(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_audit(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_validators(int argc, char **argv);
int cmd_gates(int argc, char **argv);
int cmd_ledger(int argc, char **argv);

#endif
