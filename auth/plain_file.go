package auth

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"gopkg.in/yaml.v3"
)

// plainFile is plain_acl.yml of an ACL 1.0 broker
// (acl/.../plain/PlainPermissionManager.java, AclConstants.java).
type plainFile struct {
	GlobalWhiteRemoteAddresses []string       `yaml:"globalWhiteRemoteAddresses"`
	Accounts                   []plainAccount `yaml:"accounts"`
}

type plainAccount struct {
	AccessKey          string   `yaml:"accessKey"`
	SecretKey          string   `yaml:"secretKey"`
	WhiteRemoteAddress string   `yaml:"whiteRemoteAddress"`
	Admin              bool     `yaml:"admin"`
	DefaultTopicPerm   string   `yaml:"defaultTopicPerm"`
	DefaultGroupPerm   string   `yaml:"defaultGroupPerm"`
	TopicPerms         []string `yaml:"topicPerms"`
	GroupPerms         []string `yaml:"groupPerms"`
}

// ACL 1.0 permission bits (acl/.../common/Permission.java).
const (
	permDeny byte = 1
	permAny  byte = 1 << 1
	permPub  byte = 1 << 2
	permSub  byte = 1 << 3
)

// parsePerm is Permission.parsePermFromString: unknown or missing is DENY.
func parsePerm(s string) byte {
	switch strings.TrimSpace(s) {
	case "PUB":
		return permPub
	case "SUB":
		return permSub
	case "PUB|SUB", "SUB|PUB":
		return permPub | permSub
	}
	return permDeny
}

// checkPerm is Permission.checkPermission.
func checkPerm(needed, owned byte) bool {
	if owned&permDeny != 0 {
		return false
	}
	if needed&permAny != 0 {
		return owned&(permPub|permSub) != 0
	}
	return needed&owned != 0
}

// plainAccess is one parsed account: resources are topic names and
// "%RETRY%"+group for groups, as PlainAccessResource keys them.
type plainAccess struct {
	plainAccount
	white     addrMatcher
	perms     map[string]byte
	defTopic  byte
	defGroup  byte
	mac       *macPool
	adminFlag bool
}

// plainConfig is one parsed file.
type plainConfig struct {
	global   []addrMatcher
	accounts map[string]*plainAccess
}

// parsePlain reads and checks a plain_acl.yml document.
func parsePlain(b []byte) (*plainConfig, error) {
	var f plainFile
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&f); err != nil && err.Error() != "EOF" {
		return nil, fmt.Errorf("parse: %w", err)
	}
	c := &plainConfig{accounts: make(map[string]*plainAccess, len(f.Accounts))}
	for _, g := range f.GlobalWhiteRemoteAddresses {
		m, err := parseAddrMatcher(g)
		if err != nil {
			return nil, err
		}
		c.global = append(c.global, m)
	}
	for _, a := range f.Accounts {
		if a.AccessKey == "" || a.SecretKey == "" {
			return nil, fmt.Errorf("an account lacks accessKey or secretKey")
		}
		if len(a.AccessKey) <= 6 || len(a.SecretKey) <= 6 {
			return nil, fmt.Errorf("accessKey and secretKey of %q must be longer than 6 characters", a.AccessKey)
		}
		white, err := parseAddrMatcher(a.WhiteRemoteAddress)
		if err != nil {
			return nil, err
		}
		pa := &plainAccess{plainAccount: a, white: white, perms: make(map[string]byte),
			defTopic: parsePerm(a.DefaultTopicPerm), defGroup: parsePerm(a.DefaultGroupPerm),
			mac: newMacPool(a.SecretKey), adminFlag: a.Admin}
		for _, list := range [...]struct {
			items []string
			group bool
		}{{a.TopicPerms, false}, {a.GroupPerms, true}} {
			for _, it := range list.items {
				k, p, ok := strings.Cut(it, "=")
				if !ok || strings.Contains(p, "=") {
					kind := "topic"
					if list.group {
						kind = "group"
					}
					return nil, fmt.Errorf("Parse resource permission failed for %s:%s", kind, it) //nolint:staticcheck // ST1005: the text of Java's AclException, which clients and tests match
				}
				k = strings.TrimSpace(k)
				if list.group {
					k = "%RETRY%" + k
				}
				pa.perms[k] = parsePerm(p)
			}
		}
		c.accounts[a.AccessKey] = pa
	}
	return c, nil
}

// readPlain reads and parses path.
func readPlain(path string) (*plainConfig, []byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("auth: read ACL file: %w", err)
	}
	c, err := parsePlain(b)
	if err != nil {
		return nil, nil, fmt.Errorf("auth: ACL file %s: %w", path, err)
	}
	return c, b, nil
}
