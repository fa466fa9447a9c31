import type { UsersService } from '../users/users.service';
import { CLI_CONTEXT } from '../shared/audit-context';
import { readSecret } from './read-secret';

export const USERS_USAGE = `users add <username> [--role viewer|editor|admin|none]   password from stdin or a prompt
users list
users set-role <username> <viewer|editor|admin|none>   also ends the user's sessions
users set-password <username>                          password from stdin or a prompt; also ends the user's sessions
users disable <username>                               also ends the user's sessions
users delete <username>`;

function roleOption(args: string[]): string | null {
  const at = args.indexOf('--role');
  if (at === -1) return null;
  const role = args[at + 1];
  if (!role) throw new Error('--role needs a value');
  return role;
}

function required(value: string | undefined, what: string): string {
  if (!value || value.startsWith('--')) throw new Error(`missing ${what}\n\n${USERS_USAGE}`);
  return value;
}

/** Runs one `users` subcommand; returns the text to print. */
export async function runUsersCommand(users: UsersService, [action, ...args]: string[]): Promise<string> {
  switch (action) {
    case 'add': {
      const username = required(args[0], '<username>');
      const user = await users.add(username, await readSecret(`Password for ${username}: `), roleOption(args), CLI_CONTEXT);
      return `Created user ${user.username} (role: ${user.role ?? 'none'})`;
    }
    case 'list': {
      const rows = await users.list();
      if (rows.length === 0) return 'No users';
      return rows.map((u) => `${u.username}\t${u.role ?? 'none'}\t${u.disabled ? 'disabled' : 'active'}\t${u.created_at}`).join('\n');
    }
    case 'set-role': {
      const username = required(args[0], '<username>');
      const role = required(args[1], '<role>');
      await users.setRole(username, role, CLI_CONTEXT);
      return `Role of ${username} is now ${role}; their sessions ended`;
    }
    case 'set-password': {
      const username = required(args[0], '<username>');
      await users.setPassword(username, await readSecret(`New password for ${username}: `), CLI_CONTEXT);
      return `Password of ${username} changed; their sessions ended`;
    }
    case 'disable': {
      const username = required(args[0], '<username>');
      await users.disable(username, CLI_CONTEXT);
      return `Disabled ${username} and ended their sessions`;
    }
    case 'delete': {
      const username = required(args[0], '<username>');
      await users.delete(username, CLI_CONTEXT);
      return `Deleted ${username}`;
    }
    default:
      throw new Error(`unknown users command "${action ?? ''}"\n\n${USERS_USAGE}`);
  }
}
